// CPU strided-batched GEMM: ddl's own sgemm for float32, Eigen for float64;
// float16/bfloat16 operands are widened to float32, multiplied with float32
// accumulation and the product rounded once (see Note [Half compute]).
#include <vector>

#include <ddl/tensor/cpu/sgemm.h>
#include <ddl/tensor/kernels/gemm_kernel.h>

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

// The float32 copy of a rows x cols matrix stored with leading dimension ld
// (same layout, so sgemm reads it with the same ld).
template <typename H>
std::vector<float> widen(const H* src, int64_t rows, int64_t cols, int64_t ld) {
  std::vector<float> out(static_cast<size_t>(rows > 0 ? (rows - 1) * ld + cols : 0));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[r * ld + c] = static_cast<float>(src[r * ld + c]);
  return out;
}

template <typename H>
void gemm_reduced(const kernels::GemmArgs& g) {
  const auto* A = static_cast<const H*>(g.A);
  const auto* B = static_cast<const H*>(g.B);
  auto* C = static_cast<H*>(g.C);
  // Stored extents: op(A) is [M, K], so A is [K, M] when transposed; op(B) is [K, N].
  const int64_t a_rows = g.trans_a ? g.K : g.M, a_cols = g.trans_a ? g.M : g.K;
  const int64_t b_rows = g.trans_b ? g.N : g.K, b_cols = g.trans_b ? g.K : g.N;
  std::vector<float> c32(static_cast<size_t>(g.M * g.N));
  for (int64_t b = 0; b < g.batch; ++b) {
    const std::vector<float> a32 = widen(A + b * g.stride_a, a_rows, a_cols, g.lda);
    const std::vector<float> b32 = widen(B + b * g.stride_b, b_rows, b_cols, g.ldb);
    H* Cb = C + b * g.stride_c;
    for (int64_t i = 0; i < g.M; ++i)
      for (int64_t j = 0; j < g.N; ++j) c32[i * g.N + j] = g.beta == 0 ? 0.0f : static_cast<float>(Cb[i * g.ldc + j]);
    sgemm(g.trans_a, g.trans_b, g.M, g.N, g.K, static_cast<float>(g.alpha), a32.data(), g.lda, b32.data(), g.ldb,
          static_cast<float>(g.beta), c32.data(), g.N);
    for (int64_t i = 0; i < g.M; ++i)
      for (int64_t j = 0; j < g.N; ++j) Cb[i * g.ldc + j] = H(c32[i * g.N + j]);
  }
}

void gemm_cpu(const kernels::GemmArgs& g) {
  if (g.dtype == DType::Float16) return gemm_reduced<Half>(g);
  if (g.dtype == DType::BFloat16) return gemm_reduced<BFloat16>(g);
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
