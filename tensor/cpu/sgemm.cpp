// CPU GEMM: a BLIS-style AVX-512 sgemm, Eigen fallback and Eigen dgemm.
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
// The micro-kernel keeps an MR x NR = 8 x 32 tile of C in 16 zmm registers.
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
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <ddl/tensor/cpu/sgemm.h>
#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
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

// Eigen path (non-AVX-512 sgemm, and dgemm), on blocks of at most 32 rows of C.
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

#if defined(__AVX512F__)

constexpr int MR = 8;         // micro-tile rows
constexpr int NR = 32;        // micro-tile columns (2 zmm)
constexpr int64_t KC = 256;   // depth of a packed block
constexpr int64_t MC = 128;   // rows of a packed A block
constexpr int64_t NC = 4096;  // columns of a packed B block (L3)

// 64-byte aligned growable scratch, one per thread, kept across calls.
struct Scratch {
  float* p = nullptr;
  size_t n = 0;
  float* get(size_t need) {
    if (need > n) {
      std::free(p);
      p = static_cast<float*>(std::aligned_alloc(64, (need * sizeof(float) + 63) / 64 * 64));
      n = need;
    }
    return p;
  }
  ~Scratch() { std::free(p); }
};
thread_local Scratch tl_apack, tl_bpack;

// Horizontal sum in a fixed order (GCC 12's _mm512_reduce_add_ps trips -Wuninitialized).
inline float hsum(__m512 x) {
  // (mask forms: the plain ones use _mm512_undefined_ps, same warning)
  x = _mm512_add_ps(x, _mm512_mask_shuffle_f32x4(x, 0xFFFF, x, x, 0x4E));
  x = _mm512_add_ps(x, _mm512_mask_shuffle_f32x4(x, 0xFFFF, x, x, 0xB1));
  x = _mm512_add_ps(x, _mm512_mask_permute_ps(x, 0xFFFF, x, 0x4E));
  x = _mm512_add_ps(x, _mm512_mask_permute_ps(x, 0xFFFF, x, 0xB1));
  return _mm512_cvtss_f32(x);
}

inline __mmask16 tail_mask(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1); }

// C[r, 16v + lane] = alpha * acc + beta * C  (beta == 0: C not read).
inline void store_tile(float* c, __mmask16 m, __m512 x, float alpha, float beta) {
  if (alpha != 1.0f) x = _mm512_mul_ps(x, _mm512_set1_ps(alpha));
  if (beta == 1.0f)
    x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, c));
  else if (beta != 0.0f)
    x = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, c), _mm512_set1_ps(beta), x);
  _mm512_mask_storeu_ps(c, m, x);
}

// Micro-kernel: C[R x 16*NV] (+)= A[R x kc] * B[kc x 16*NV].
//   A packed (PA):  a[k*MR + r]      A in place (!PA): a[r*a_rs + k]
//   B packed:       b[k*NR + 16v + lane], zero padded past the last column.
//   mlast masks the columns of the last zmm (C edge).
//          B:  [b0 ........ ][b1 ........ ]   (2 zmm per k)
//   A: a0   acc[0][0]       acc[0][1]
//      ..   ...             ...               R <= 8 rows, a broadcast each
//      a7   acc[7][0]       acc[7][1]
// c_next: the next tile's C, prefetched now so its misses overlap this tile's FMAs.
template <int R, int NV, bool PA>
void ukernel(int64_t kc, const float* a, int64_t a_rs, const float* b, float* c, int64_t ldc, __mmask16 mlast,
             float alpha, float beta, const float* c_next) {
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    __builtin_prefetch(c_next + r * ldc, 1, 3);
    __builtin_prefetch(c_next + r * ldc + 16 * NV - 1, 1, 3);
  }
  __m512 acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  const float* ap[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) ap[r] = PA ? a + r : a + r * a_rs;
  const int64_t a_cs = PA ? MR : 1;
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(ap[r][k * a_cs]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
    b += NR;
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v)
      store_tile(c + r * ldc + 16 * v, v == NV - 1 ? mlast : __mmask16(0xFFFF), acc[r][v], alpha, beta);
}

using UKernel = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, __mmask16, float, float,
                         const float*);
template <bool PA, int NV, size_t... I>
constexpr auto make_row(std::index_sequence<I...>) {
  return std::array<UKernel, MR>{&ukernel<int(I) + 1, NV, PA>...};
}
// kernels[PA][NV-1][R-1]
const std::array<UKernel, MR> kernels[2][2] = {
    {make_row<false, 1>(std::make_index_sequence<MR>{}), make_row<false, 2>(std::make_index_sequence<MR>{})},
    {make_row<true, 1>(std::make_index_sequence<MR>{}), make_row<true, 2>(std::make_index_sequence<MR>{})}};

// dst[c * ds + r] = src[r * ss + c] for an 8x8 block.
inline void transpose8x8(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 t[8], u[8];
  for (int r = 0; r < 8; ++r) t[r] = _mm256_loadu_ps(src + r * ss);
  for (int r = 0; r < 8; r += 2) {
    u[r] = _mm256_unpacklo_ps(t[r], t[r + 1]);
    u[r + 1] = _mm256_unpackhi_ps(t[r], t[r + 1]);
  }
  for (int r = 0; r < 8; r += 4) {
    t[r] = _mm256_shuffle_ps(u[r], u[r + 2], 0x44);
    t[r + 1] = _mm256_shuffle_ps(u[r], u[r + 2], 0xEE);
    t[r + 2] = _mm256_shuffle_ps(u[r + 1], u[r + 3], 0x44);
    t[r + 3] = _mm256_shuffle_ps(u[r + 1], u[r + 3], 0xEE);
  }
  // t[c] (c < 4) holds column c of rows 0-3 in its low half and column c+4 in
  // its high half; t[c + 4] the same for rows 4-7.
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(dst + c * ds, _mm256_permute2f128_ps(t[c], t[c + 4], 0x20));
    _mm256_storeu_ps(dst + (c + 4) * ds, _mm256_permute2f128_ps(t[c], t[c + 4], 0x31));
  }
}

// Pack op(A)[mb x kb] (element (i,k) at A[i*rs + k*cs]) into MR-row panels.
void pack_a(int64_t mb, int64_t kb, const float* A, int64_t rs, int64_t cs, float* dst) {
  for (int64_t i0 = 0; i0 < mb; i0 += MR, dst += MR * kb) {
    const int64_t R = std::min<int64_t>(MR, mb - i0);
    const float* src = A + i0 * rs;
    if (rs == 1) {  // transposed A: the MR rows of one k are contiguous
      const __mmask8 m = __mmask8((1u << R) - 1);
      for (int64_t k = 0; k < kb; ++k) _mm256_store_ps(dst + k * MR, _mm256_maskz_loadu_ps(m, src + k * cs));
    } else if (R == MR && cs == 1) {  // row-major A: 8x8 register transposes
      int64_t k = 0;
      for (; k + 8 <= kb; k += 8) transpose8x8(src + k, rs, dst + k * MR, MR);
      for (; k < kb; ++k)
        for (int r = 0; r < MR; ++r) dst[k * MR + r] = src[r * rs + k];
    } else {
      for (int64_t k = 0; k < kb; ++k)
        for (int r = 0; r < MR; ++r) dst[k * MR + r] = r < R ? src[r * rs + k * cs] : 0.0f;
    }
  }
}

// Pack one NR-column panel of op(B)[kb x n] (element (k,j) at B[k*rs + j*cs]),
// zero padding columns n..NR-1.
void pack_b_panel(int64_t kb, int64_t n, const float* B, int64_t rs, int64_t cs, float* dst) {
  if (cs == 1) {
    const __mmask16 m0 = tail_mask(n), m1 = tail_mask(std::max<int64_t>(n - 16, 0));
    for (int64_t k = 0; k < kb; ++k) {
      _mm512_store_ps(dst + k * NR, _mm512_maskz_loadu_ps(m0, B + k * rs));
      _mm512_store_ps(dst + k * NR + 16, _mm512_maskz_loadu_ps(m1, B + k * rs + 16));
    }
  } else {  // transposed B: each column j is contiguous in k
    if (n < NR) std::memset(dst, 0, sizeof(float) * NR * kb);
    const int64_t n8 = n / 8 * 8, k8 = kb / 8 * 8;
    for (int64_t j = 0; j < n8; j += 8)
      for (int64_t k = 0; k < k8; k += 8) transpose8x8(B + j * cs + k, cs, dst + k * NR + j, NR);
    for (int64_t j = 0; j < n; ++j)  // ragged edges
      for (int64_t k = j < n8 ? k8 : 0; k < kb; ++k) dst[k * NR + j] = B[j * cs + k * rs];
  }
}

// Split [0, n) into `parts` near-equal contiguous ranges; range `i`.
inline std::pair<int64_t, int64_t> split(int64_t n, int parts, int i) { return {n * i / parts, n * (i + 1) / parts}; }
// Block size <= cap that splits n into equal-ish blocks, a multiple of `mult`.
inline int64_t balanced_block(int64_t n, int64_t cap, int64_t mult) {
  const int64_t nblk = (n + cap - 1) / cap;
  const int64_t b = (n + nblk - 1) / nblk;
  return std::min(cap, (b + mult - 1) / mult * mult);
}

void sgemm_blocked(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
                   const float* B, int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads) {
  const bool pa = !(csa == 1 && N <= 2 * NR);  // small N: read row-major A in place
  const int64_t kc = balanced_block(K, KC, 8);
  const int64_t mc = balanced_block(M, MC, MR);
  const int64_t nc = balanced_block(N, NC, NR);
  float* bpack = tl_bpack.get(size_t(kc * nc));
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
  {
    int tid = 0, nth = 1;
#if defined(_OPENMP)
    tid = omp_get_thread_num();
    nth = omp_get_num_threads();
#endif
    float* apack = pa ? tl_apack.get(size_t(mc * kc)) : nullptr;
    for (int64_t jc = 0; jc < N; jc += nc) {
      const int64_t nb = std::min(nc, N - jc), np = (nb + NR - 1) / NR;
      for (int64_t pc = 0; pc < K; pc += kc) {
        const int64_t kb = std::min(kc, K - pc);
        const auto [p0, p1] = split(np, nth, tid);
        for (int64_t p = p0; p < p1; ++p)
          pack_b_panel(kb, std::min<int64_t>(NR, nb - p * NR), B + pc * rsb + (jc + p * NR) * csb, rsb, csb,
                       bpack + p * NR * kb);
#pragma omp barrier
        const float beta_k = pc == 0 ? beta : 1.0f;
        const int64_t nmb = (M + mc - 1) / mc;
        const bool split_m = nmb % nth == 0 || nmb >= 4 * nth;
        for (int64_t ib = split_m ? tid : 0; ib < nmb; ib += split_m ? nth : 1) {
          const int64_t ic = ib * mc, mb = std::min(mc, M - ic);
          // Plain variables, not a structured binding: clang before 16 cannot capture those.
          const std::pair<int64_t, int64_t> js = split_m ? std::pair<int64_t, int64_t>{0, np} : split(np, nth, tid);
          const int64_t j0 = js.first, j1 = js.second;
          if (j0 == j1) continue;
          const float* a = A + ic * rsa + pc * csa;
          if (pa) pack_a(mb, kb, a, rsa, csa, apack);
          float* c = C + ic * ldc + jc;
          auto tile = [&](int64_t ir, int64_t jp, int64_t ir_next, int64_t jp_next) {
            const int64_t R = std::min<int64_t>(MR, mb - ir), n = std::min<int64_t>(NR, nb - jp * NR);
            const UKernel f = kernels[pa][n > 16][R - 1];
            f(kb, pa ? apack + ir * kb : a + ir * rsa, rsa, bpack + jp * NR * kb, c + ir * ldc + jp * NR, ldc,
              tail_mask(n > 16 ? n - 16 : n), alpha, beta_k,
              c + std::min(ir_next, mb - 1) * ldc + std::min(jp_next, j1 - 1) * NR);
          };
          // A micro-panel stays in L1 across jr; B streams from L2/L3 and C is
          // walked row-block by row-block (prefetch friendly; best for small K).
          for (int64_t ir = 0; ir < mb; ir += MR)
            for (int64_t jp = j0; jp < j1; ++jp) jp + 1 < j1 ? tile(ir, jp, ir, jp + 1) : tile(ir, jp, ir + MR, j0);
        }
#pragma omp barrier
      }
    }
  }
}

// Small-N path (N <= 8, row-major A): dot products vectorised along K.
//   acc[r][j] = sum_k A[i+r, k] * Bt[j, k], 16 k per FMA, reduced at the end.
template <int R, int NCOL>
void dot_kernel(int64_t K, const float* a, int64_t lda, const float* bt, int64_t ldbt, float* c, int64_t ldc,
                float alpha, float beta) {
  __m512 acc[R][NCOL];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NCOL; ++j) acc[r][j] = _mm512_setzero_ps();
  auto step = [&](int64_t k, __mmask16 m) __attribute__((always_inline)) {
    __m512 bv[NCOL];
#pragma GCC unroll 4
    for (int j = 0; j < NCOL; ++j) bv[j] = _mm512_maskz_loadu_ps(m, bt + j * ldbt + k);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_maskz_loadu_ps(m, a + r * lda + k);
#pragma GCC unroll 4
      for (int j = 0; j < NCOL; ++j) acc[r][j] = _mm512_fmadd_ps(av, bv[j], acc[r][j]);
    }
  };
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) step(k, 0xFFFF);
  if (k < K) step(k, tail_mask(K - k));
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NCOL; ++j) {
      float* cp = c + r * ldc + j;
      const float v = alpha * hsum(acc[r][j]);
      *cp = beta == 0.0f ? v : v + beta * *cp;
    }
}
using DotKernel = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t, float, float);
template <int R, size_t... J>
constexpr std::array<DotKernel, 4> dot_row(std::index_sequence<J...>) {
  return {&dot_kernel<R, int(J) + 1>...};
}
const std::array<DotKernel, 4> dot_kernels[4] = {
    dot_row<1>(std::make_index_sequence<4>{}), dot_row<2>(std::make_index_sequence<4>{}),
    dot_row<3>(std::make_index_sequence<4>{}), dot_row<4>(std::make_index_sequence<4>{})};

void sgemm_small_n(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
                   int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads) {
  const float* bt = B;  // op(B)^T with rows of length K
  int64_t ldbt = csb;
  if (rsb != 1) {  // not transposed: gather op(B)^T [N x K]
    float* buf = tl_bpack.get(size_t(N * K));
    for (int64_t j = 0; j < N; ++j)  // contiguous writes; the reads stay in cache
      for (int64_t k = 0; k < K; ++k) buf[j * K + k] = B[k * rsb + j * csb];
    bt = buf;
    ldbt = K;
  }
  const int64_t nrb = (M + 3) / 4;
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static)
  for (int64_t rb = 0; rb < nrb; ++rb) {
    const int64_t i = rb * 4, R = std::min<int64_t>(4, M - i);
    for (int64_t j = 0; j < N; j += 4)
      dot_kernels[R - 1][std::min<int64_t>(4, N - j) - 1](K, A + i * lda, lda, bt + j * ldbt, ldbt, C + i * ldc + j,
                                                          ldc, alpha, beta);
  }
}

#endif  // __AVX512F__

}  // namespace

void sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
           const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0 || alpha == 0.0f) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
#if defined(__AVX512F__)
  // op(A)(i,k) = A[i*rsa + k*csa], op(B)(k,j) = B[k*rsb + j*csb].
  const int64_t rsa = trans_a ? 1 : lda, csa = trans_a ? lda : 1;
  const int64_t rsb = trans_b ? 1 : ldb, csb = trans_b ? ldb : 1;
  int nt = gemm_threads();
  if (double(M) * double(N) * double(K) < 64.0 * 64 * 64) nt = 1;  // not worth a fork
  if (N <= 8 && !trans_a)
    sgemm_small_n(M, N, K, alpha, A, lda, B, rsb, csb, beta, C, ldc, nt);
  else
    sgemm_blocked(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, ldc, nt);
#else
  eigen_gemm<float>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

void dgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
           const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  eigen_gemm<double>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace ddl::cpu
