// CPU strided-batched GEMM: ddl's own sgemm for float32, Eigen for float64.
#include "tensor/cpu/sgemm.h"
#include "tensor/gemm_kernel.h"

namespace ddl::cpu {
namespace {

// Overloads pick the routine per element type.
void gemm_one(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const float* A, int64_t lda,
              const float* B, int64_t ldb, double beta, float* C, int64_t ldc) {
  sgemm(ta, tb, M, N, K, static_cast<float>(alpha), A, lda, B, ldb, static_cast<float>(beta), C, ldc);
}
void gemm_one(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
              const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_cpu(const kernels::GemmArgs& g) {
  DDL_DISPATCH_FLOAT(g.dtype, "matmul", [&] {
    const auto* A = static_cast<const scalar_t*>(g.A);
    const auto* B = static_cast<const scalar_t*>(g.B);
    auto* C = static_cast<scalar_t*>(g.C);
    for (int64_t b = 0; b < g.batch; ++b)
      gemm_one(g.trans_a, g.trans_b, g.M, g.N, g.K, g.alpha, A + b * g.stride_a, g.lda, B + b * g.stride_b, g.ldb,
               g.beta, C + b * g.stride_c, g.ldc);
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::gemm_kernel, CPU, &gemm_cpu);

}  // namespace ddl::cpu
