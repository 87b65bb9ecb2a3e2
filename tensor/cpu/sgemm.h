#pragma once
// Single/double precision GEMM for the CPU backend.
//
// Row-major C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.
//   op(A) = A   (A stored [M,K] row-major, lda >= K)  when !trans_a
//   op(A) = A^T (A stored [K,M] row-major, lda >= M)  when  trans_a
//   (same for B with ldb, [K,N] / [N,K]); ldc >= N.
// beta == 0 overwrites C without reading it (C may hold NaN/garbage).
// M, N or K may be 0 (K == 0 gives C = beta * C).
//
// Threading: up to gemm_threads() OpenMP threads. Work is split only over
// M/N blocks (never over K), so results are bitwise identical for any thread
// count.
#include <cstdint>

namespace ddl::cpu {

// omp_get_max_threads(), or 1 when called inside an active parallel region
// (or when built without OpenMP).
int gemm_threads();

void sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

// Same contract; implemented with Eigen (used for gradient checks only).
void dgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
           const double* B, int64_t ldb, double beta, double* C, int64_t ldc);

}  // namespace ddl::cpu
