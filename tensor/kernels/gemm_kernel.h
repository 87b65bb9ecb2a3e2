// Kernel slot of the strided-batched GEMM behind matmul, linear and conv
// (see Note [Kernel dispatch]). Pointers are device pointers of `dtype` elements.
#pragma once

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/dtype.h>

namespace ddl::kernels {

// For b in [0, batch): C_b = alpha * op(A_b) op(B_b) + beta * C_b, row-major,
// where X_b = X + b * stride_x; C_b is [M, N]; beta == 0 ignores C's contents.
struct GemmArgs {
  DType dtype;
  bool trans_a, trans_b;
  int64_t M, N, K;
  double alpha;
  const void* A;
  int64_t lda, stride_a;
  const void* B;
  int64_t ldb, stride_b;
  double beta;
  void* C;
  int64_t ldc, stride_c;
  int64_t batch;
  int device = 0;  // the index of the device holding A, B and C (read by the CUDA kernel)
};
using GemmFnPtr = void(const GemmArgs& args);
DDL_DECLARE_KERNEL(gemm_kernel, GemmFnPtr);

}  // namespace ddl::kernels
