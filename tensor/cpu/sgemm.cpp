// CPU GEMM: dispatch to the sgemm kernel of the CPU's instruction-set level
// (cpu_level.h: AVX-512 in sgemm_avx512.cpp, AVX2+FMA in sgemm_avx2.cpp), Eigen for
// the portable level and for dgemm.
//
// Note [sgemm blocking]
// ~~~~~~~~~~~~~~~~~~~~~
// Classic GotoBLAS/BLIS loop nest (row-major, C[M,N] += A[M,K] B[K,N]):
//
//   for jc in N step nc        B block  kc x nc  packed once, shared by threads
//     for pc in K step kc      (L3), as NR-wide column panels
//       pack B[pc:+kc, jc:+nc]
//       for ic in M step mc    A block  mc x kc  packed per thread,
//         pack A[ic:+mc, pc:+kc]            as MR-high row panels
//         for ir in mc step MR         A micro-panel MR x kc (8 KB) stays in L1
//           for jr in nc step NR       B micro-panels stream from L2/L3
//             C[ir:+MR, jr:+NR] (+)= Apanel * Bpanel     (micro-kernel)
//
// The ir-outer order (rather than BLIS's jr-outer) measured equal or better on
// Zen 4 (32 KB L1d, 1 MB L2): a kc x NR B micro-panel would fill L1, whereas
// streaming B costs only 8 bytes per FMA cycle, and walking C row-block by
// row-block lets the next tile's C be prefetched (which dominates for small K).
// Block sizes KC=256, MC=128, NC=4096 were tuned on the VGG shapes.
//
// The AVX-512 micro-kernel keeps an MR x NR = 8 x 32 tile of C in 16 zmm registers,
// the AVX2 one a 6 x 16 tile in 12 ymm registers (Goto and van de Geijn's shape for
// 16 vector registers; BLIS's Haswell kernel is the same).
// Row edges use a kernel instantiated for fewer rows (no wasted FMAs), column
// edges use masked C loads/stores (packed B is zero padded to NR columns).
// When N is small the A block is not worth packing (it would be used by at
// most two B panels): the kernel then reads row-major A in place.
// When N <= 8 a dot-product kernel vectorised along K is used instead.
//
// Threads split the packing of B panels, then the (ic, jr) work: whole ic
// blocks when there are enough of them, else each thread takes a range of jr
// panels of every ic block. K is never split and every C element is always
// computed by the same instruction sequence, so results do not depend on the
// thread count. Block sizes depend only on the shape.
//
// A caller that reuses one B for many products may pack it once itself, in the
// layout sgemm_blocked would build block by block (sgemm.h: sgemm_packed_b_layout,
// sgemm_packed); the loop nest then skips its packing step.
#include <Eigen/Core>
#include <algorithm>

#include <ddl/base/error.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/sgemm.h>
#include <ddl/tensor/cpu/sgemm_levels.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace ddl::cpu {

int gemm_threads() {
#if defined(_OPENMP)
  return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
  return 1;
#endif
}

namespace {

// Eigen path (the portable level's sgemm, and dgemm), on blocks of at most 32 rows of C.
// Eigen's own GEMM threading would make the rounding depend on the thread
// count; a destination whose MaxRowsAtCompileTime is 32 keeps each block's
// product serial (Eigen's parallelize_gemm condition), and the blocks are
// spread over threads here.
template <typename T>
void eigen_rows(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                int64_t ldb, T beta, T* C, int64_t ldc) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using CMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor, 32, Eigen::Dynamic>;
  using CMap = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
  Eigen::Map<CMat, 0, Eigen::OuterStride<>> c(C, M, N, Eigen::OuterStride<>(ldc));
  if (beta == T(0))
    c.setZero();
  else if (beta != T(1))
    c *= beta;
  if (K == 0 || alpha == T(0)) return;
  CMap a(A, ta ? K : M, ta ? M : K, Eigen::OuterStride<>(lda));
  CMap b(B, tb ? N : K, tb ? K : N, Eigen::OuterStride<>(ldb));
  if (!ta && !tb)
    c.noalias() += alpha * (a * b);
  else if (ta && !tb)
    c.noalias() += alpha * (a.transpose() * b);
  else if (!ta && tb)
    c.noalias() += alpha * (a * b.transpose());
  else
    c.noalias() += alpha * (a.transpose() * b.transpose());
}

template <typename T>
void eigen_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                int64_t ldb, T beta, T* C, int64_t ldc) {
  constexpr int64_t RB = 32;
  const int64_t nblk = (M + RB - 1) / RB;
  const int nt = double(M) * double(N) * double(K) < 64.0 * 64 * 64 ? 1 : gemm_threads();
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (int64_t blk = 0; blk < nblk; ++blk) {
    const int64_t i0 = blk * RB;
    eigen_rows<T>(ta, tb, std::min(RB, M - i0), N, K, alpha, ta ? A + i0 : A + i0 * lda, lda, B, ldb, beta,
                  C + i0 * ldc, ldc);
  }
}

}  // namespace

void sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  const CpuLevel level = cpu_level();
  if (level == CpuLevel::baseline) {
    eigen_gemm<float>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  // op(A)(i,k) = A[i*rsa + k*csa], op(B)(k,j) = B[k*rsb + j*csb].
  const int64_t rsa = trans_a ? 1 : lda, csa = trans_a ? lda : 1;
  const int64_t rsb = trans_b ? 1 : ldb, csb = trans_b ? ldb : 1;
  int nt = gemm_threads();
  if (double(M) * double(N) * double(K) < 64.0 * 64 * 64) nt = 1;  // not worth a fork
  if (level == CpuLevel::avx512)
    isa::sgemm_avx512(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, ldc, nt);
  else
    isa::sgemm_avx2(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, ldc, nt);
}

PackedB sgemm_packed_b_layout(int64_t K, int64_t N) {
  PackedB p;
  if (K <= 0 || N <= 0) return p;
  switch (cpu_level()) {
    case CpuLevel::avx512:
      p.floats = isa::sgemm_packed_b_layout_avx512(K, N, &p.kc, &p.nr);
      break;
    case CpuLevel::avx2:
      p.floats = isa::sgemm_packed_b_layout_avx2(K, N, &p.kc, &p.nr);
      break;
    case CpuLevel::baseline:
      break;
  }
  return p;
}

void sgemm_packed(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const PackedB& layout,
                  const float* packed, float* C, int64_t ldc) {
  const PackedB here = sgemm_packed_b_layout(K, N);
  DDL_CHECK(here.floats > 0 && here.floats == layout.floats && here.kc == layout.kc && here.nr == layout.nr,
            "sgemm_packed: B was packed for another CPU level or shape (K ", K, ", N ", N, ")");
  if (M <= 0) return;
  DDL_CHECK(reinterpret_cast<uintptr_t>(packed) % 64 == 0, "sgemm_packed: the packed operand is not 64-byte aligned");
  int nt = gemm_threads();
  if (double(M) * double(N) * double(K) < 64.0 * 64 * 64) nt = 1;  // as sgemm
  if (cpu_level() == CpuLevel::avx512)
    isa::sgemm_packed_avx512(M, N, K, A, lda, packed, C, ldc, nt);
  else
    isa::sgemm_packed_avx2(M, N, K, A, lda, packed, C, ldc, nt);
}

void dgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
           const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  eigen_gemm<double>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace ddl::cpu
