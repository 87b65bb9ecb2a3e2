#pragma once
// The sgemm kernels of each instruction-set level (cpu_level.h), for sgemm.cpp's
// dispatch. Each lives in a file compiled with its level's flags; everything else in
// those files is in an anonymous namespace, so no inline function compiled for a wider
// level can stand in for the portable one at link time (the ODR hazard of mixing
// flags: tests/layering/check_isa_objects.py checks the objects' symbols).
//
// C[M,N] = alpha * op(A) op(B) + beta * C, row-major C; op(A)(i,k) = A[i*rsa + k*csa],
// op(B)(k,j) = B[k*rsb + j*csb]; M, N, K > 0 and alpha != 0 (sgemm handles the rest).
// Results depend on the level but never on nthreads.
#include <cstdint>

namespace ddl::cpu::isa {

void sgemm_avx512(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
                  const float* B, int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads);
void sgemm_avx2(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa, const float* B,
                int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads);

// op(B) packed whole for many products (sgemm.h's sgemm_packed_b_layout), and C = A op(B)
// from it (alpha 1, beta 0, row-major A).
int64_t sgemm_packed_b_layout_avx512(int64_t K, int64_t N, int64_t* kc, int64_t* nr);
void sgemm_packed_avx512(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* packed, float* C,
                         int64_t ldc, int nthreads);
int64_t sgemm_packed_b_layout_avx2(int64_t K, int64_t N, int64_t* kc, int64_t* nr);
void sgemm_packed_avx2(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* packed, float* C,
                       int64_t ldc, int nthreads);

}  // namespace ddl::cpu::isa
