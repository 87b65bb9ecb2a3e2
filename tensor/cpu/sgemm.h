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

// op(B) [K, N] packed once by its producer for many products C = A op(B) (Winograd writes
// its transformed weights so, read by every chunk of images). Layout: for each block of kc
// rows of K (the last one shorter), its nr-column panels in order, each [rows][nr] with
// zeros past N; element (k, j) of the block at K offset pc (kb rows) is at
// pc * np * nr + (j / nr) * nr * kb + (k - pc) * nr + j % nr, np = ceil(N / nr).
// floats is what it takes; 0 where this CPU level has no packed form, N is wider than one
// packed block, or K or N is not positive (then use sgemm).
struct PackedB {
  int64_t floats = 0, kc = 0, nr = 0;
};
PackedB sgemm_packed_b_layout(int64_t K, int64_t N);
// C [M, N] = A [M, K] (row-major, lda) op(B) from its packed form, 64-byte aligned (the
// micro-kernels load it aligned): sgemm's threading, and its bits where it packs B itself
// (N > 8; below that sgemm takes dot products along K).
// layout: what sgemm_packed_b_layout(K, N) returned when B was packed, checked against
// this level and shape.
void sgemm_packed(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const PackedB& layout,
                  const float* packed, float* C, int64_t ldc);

// Same contract; implemented with Eigen (used for gradient checks only).
void dgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
           const double* B, int64_t ldb, double beta, double* C, int64_t ldc);

}  // namespace ddl::cpu
