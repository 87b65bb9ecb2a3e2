// The AVX-512 sgemm: an 8 x 32 micro-kernel in 16 zmm accumulators, in the loop nest of
// Note [sgemm blocking] (sgemm.cpp). Compiled with -mavx512f/vl/bw/dq -mfma only
// (tensor/meson.build) and called only when cpu_level() is avx512.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <ddl/tensor/cpu/sgemm_common.h>
#include <ddl/tensor/cpu/sgemm_levels.h>

namespace ddl::cpu::isa {
namespace {
constexpr int MR = 8;         // micro-tile rows
constexpr int NR = 32;        // micro-tile columns (2 zmm)
constexpr int64_t KC = 256;   // depth of a packed block
constexpr int64_t MC = 128;   // rows of a packed A block
constexpr int64_t NC = 4096;  // columns of a packed B block (L3)

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

// The blocking and kernels of this level, for sgemm_blocked (sgemm_common.h).
struct Blocking {
  static constexpr int64_t MR = isa::MR, NR = isa::NR, KC = isa::KC, MC = isa::MC, NC = isa::NC;
  static constexpr auto pack_rows = &pack_a;
  static constexpr auto pack_cols = &pack_b_panel;
  static void tile(bool pa, int64_t R, int64_t n, int64_t kb, const float* a, int64_t a_rs, const float* b, float* c,
                   int64_t ldc, float alpha, float beta, const float* c_next) {
    kernels[pa][n > 16][R - 1](kb, a, a_rs, b, c, ldc, tail_mask(n > 16 ? n - 16 : n), alpha, beta, c_next);
  }
};

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

}  // namespace

void sgemm_avx512(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
                  const float* B, int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads) {
  if (N <= 8 && csa == 1)
    sgemm_small_n(M, N, K, alpha, A, rsa, B, rsb, csb, beta, C, ldc, nthreads);
  else
    sgemm_blocked<Blocking>(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, ldc, nthreads);
}

int64_t sgemm_packed_b_layout_avx512(int64_t K, int64_t N, int64_t* kc, int64_t* nr) {
  return packed_b_layout<Blocking>(K, N, kc, nr);
}

void sgemm_packed_avx512(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* packed, float* C,
                         int64_t ldc, int nthreads) {
  sgemm_blocked<Blocking>(M, N, K, 1.0f, A, lda, 1, nullptr, 0, 0, 0.0f, C, ldc, nthreads, packed);
}

}  // namespace ddl::cpu::isa
