// Matrix products on the device's GEMM (Eigen/ddl's sgemm on CPU).
#pragma once

#include <ddl/tensor/core/tensor.h>

namespace ddl {

// 2-D: [M, K] x [K, N] -> [M, N]. Batched: [..., M, K] x [..., K, N] with the
// leading dims broadcast. 1-D operands are promoted as in torch.matmul.
// Transposed views (x.t(), permute of the last two dims) are read in place.
// uint8/int32/int64 operands multiply on the CPU in their dtype, wrapping on overflow.
Tensor matmul(const Tensor& a, const Tensor& b);
// y = x W^T + b for x [*, in], W [out, in], b [out] (b may be undefined).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace ddl
