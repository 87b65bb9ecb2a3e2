// The AVX2+FMA sgemm: a 6 x 16 micro-kernel in 12 ymm accumulators (with two B
// vectors and one broadcast A value, 15 of the 16 ymm registers; BLIS's Haswell
// kernel has the same shape), in the loop nest of Note [sgemm blocking] (sgemm.cpp).
// Compiled with -mavx2 -mfma only (tensor/meson.build) and called only when
// cpu_level() is avx2.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include <ddl/tensor/cpu/sgemm_common.h>
#include <ddl/tensor/cpu/sgemm_levels.h>

namespace ddl::cpu::isa {
namespace {

constexpr int MR = 6;         // micro-tile rows
constexpr int NR = 16;        // micro-tile columns (2 ymm)
constexpr int64_t KC = 256;   // depth of a packed block
constexpr int64_t MC = 120;   // rows of a packed A block (a multiple of MR)
constexpr int64_t NC = 4096;  // columns of a packed B block (L3)

// Lanes [0, n) set: the column mask of a C edge (AVX2 masks are vectors).
inline __m256i lanes_below(int64_t n) {
  const int k = int(std::clamp<int64_t>(n, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// C[r, 8v + lane] = alpha * acc + beta * C for the first n lanes (beta == 0: C not read).
inline void store_tile(float* c, int n, __m256 x, float alpha, float beta) {
  if (alpha != 1.0f) x = _mm256_mul_ps(x, _mm256_set1_ps(alpha));
  if (n == 8) {
    if (beta == 1.0f)
      x = _mm256_add_ps(x, _mm256_loadu_ps(c));
    else if (beta != 0.0f)
      x = _mm256_fmadd_ps(_mm256_loadu_ps(c), _mm256_set1_ps(beta), x);
    _mm256_storeu_ps(c, x);
    return;
  }
  const __m256i m = lanes_below(n);
  if (beta == 1.0f)
    x = _mm256_add_ps(x, _mm256_maskload_ps(c, m));
  else if (beta != 0.0f)
    x = _mm256_fmadd_ps(_mm256_maskload_ps(c, m), _mm256_set1_ps(beta), x);
  _mm256_maskstore_ps(c, m, x);
}

// Micro-kernel: C[R x 8*NV] (+)= A[R x kc] * B[kc x 8*NV].
//   A packed (PA):  a[k*MR + r]      A in place (!PA): a[r*a_rs + k]
//   B packed:       b[k*NR + 8v + lane], zero padded past the last column.
// nlast: the columns of the last ymm that are inside C.
template <int R, int NV, bool PA>
void ukernel(int64_t kc, const float* a, int64_t a_rs, const float* b, float* c, int64_t ldc, int nlast, float alpha,
             float beta, const float* c_next) {
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    __builtin_prefetch(c_next + r * ldc, 1, 3);
    __builtin_prefetch(c_next + r * ldc + 8 * NV - 1, 1, 3);
  }
  __m256 acc[R][NV];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
  const float* ap[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) ap[r] = PA ? a + r : a + r * a_rs;
  const int64_t a_cs = PA ? MR : 1;
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    __m256 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(ap[r] + k * a_cs);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
    b += NR;
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) store_tile(c + r * ldc + 8 * v, v == NV - 1 ? nlast : 8, acc[r][v], alpha, beta);
}

using UKernel = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, int, float, float,
                         const float*);
template <bool PA, int NV, size_t... I>
constexpr auto make_row(std::index_sequence<I...>) {
  return std::array<UKernel, MR>{&ukernel<int(I) + 1, NV, PA>...};
}
// kernels[PA][NV-1][R-1]
const std::array<UKernel, MR> kernels[2][2] = {
    {make_row<false, 1>(std::make_index_sequence<MR>{}), make_row<false, 2>(std::make_index_sequence<MR>{})},
    {make_row<true, 1>(std::make_index_sequence<MR>{}), make_row<true, 2>(std::make_index_sequence<MR>{})}};

// Pack op(A)[mb x kb] (element (i,k) at A[i*rs + k*cs]) into MR-row panels, zero padded.
// A k's 6 values are stored as a whole 8-float vector in increasing k, so the next k
// overwrites the 2 extra floats; the caller's buffer has 8 floats of slack past the end.
void pack_a(int64_t mb, int64_t kb, const float* A, int64_t rs, int64_t cs, float* dst) {
  for (int64_t i0 = 0; i0 < mb; i0 += MR, dst += MR * kb) {
    const int64_t R = std::min<int64_t>(MR, mb - i0);
    const float* src = A + i0 * rs;
    int64_t k = 0;
    if (rs == 1) {  // transposed A: the R rows of one k are contiguous
      const __m256i m = lanes_below(R);
      for (; k < kb; ++k) _mm256_storeu_ps(dst + k * MR, _mm256_maskload_ps(src + k * cs, m));
    } else if (cs == 1) {  // row-major A: 8x8 register transposes, rows past R as zeros
      __m256 in[8], out[8];
      for (int r = 0; r < 8; ++r) in[r] = _mm256_setzero_ps();
      for (; k + 8 <= kb; k += 8) {
        for (int r = 0; r < R; ++r) in[r] = _mm256_loadu_ps(src + r * rs + k);
        transpose8x8_regs(in, out);
        for (int c = 0; c < 8; ++c) _mm256_storeu_ps(dst + (k + c) * MR, out[c]);
      }
    }
    for (; k < kb; ++k)
      for (int r = 0; r < MR; ++r) dst[k * MR + r] = r < R ? src[r * rs + k * cs] : 0.0f;
  }
}

// Pack one NR-column panel of op(B)[kb x n] (element (k,j) at B[k*rs + j*cs]),
// zero padding columns n..NR-1.
void pack_b_panel(int64_t kb, int64_t n, const float* B, int64_t rs, int64_t cs, float* dst) {
  if (cs == 1) {
    if (n == NR) {
      for (int64_t k = 0; k < kb; ++k) {
        _mm256_store_ps(dst + k * NR, _mm256_loadu_ps(B + k * rs));
        _mm256_store_ps(dst + k * NR + 8, _mm256_loadu_ps(B + k * rs + 8));
      }
      return;
    }
    const __m256i m0 = lanes_below(n), m1 = lanes_below(n - 8);
    for (int64_t k = 0; k < kb; ++k) {
      _mm256_store_ps(dst + k * NR, _mm256_maskload_ps(B + k * rs, m0));
      _mm256_store_ps(dst + k * NR + 8, _mm256_maskload_ps(B + k * rs + 8, m1));
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
    kernels[pa][n > 8][R - 1](kb, a, a_rs, b, c, ldc, int(n > 8 ? n - 8 : n), alpha, beta, c_next);
  }
};

// Horizontal sum in a fixed order.
inline float hsum(__m256 x) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Small-N path (N <= 8, row-major A): dot products vectorised along K,
//   acc[r][j] = sum_k A[i+r, k] * Bt[j, k], 8 k per FMA, reduced at the end.
template <int R, int NCOL>
void dot_kernel(int64_t K, const float* a, int64_t lda, const float* bt, int64_t ldbt, float* c, int64_t ldc,
                float alpha, float beta) {
  __m256 acc[R][NCOL];
#pragma GCC unroll 2
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NCOL; ++j) acc[r][j] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    __m256 bv[NCOL];
#pragma GCC unroll 4
    for (int j = 0; j < NCOL; ++j) bv[j] = _mm256_loadu_ps(bt + j * ldbt + k);
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_loadu_ps(a + r * lda + k);
#pragma GCC unroll 4
      for (int j = 0; j < NCOL; ++j) acc[r][j] = _mm256_fmadd_ps(av, bv[j], acc[r][j]);
    }
  }
  if (k < K) {
    const __m256i m = lanes_below(K - k);
    __m256 bv[NCOL];
#pragma GCC unroll 4
    for (int j = 0; j < NCOL; ++j) bv[j] = _mm256_maskload_ps(bt + j * ldbt + k, m);
#pragma GCC unroll 2
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_maskload_ps(a + r * lda + k, m);
#pragma GCC unroll 4
      for (int j = 0; j < NCOL; ++j) acc[r][j] = _mm256_fmadd_ps(av, bv[j], acc[r][j]);
    }
  }
#pragma GCC unroll 2
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
// Two rows by up to four columns: 8 accumulators, 4 B vectors and one A vector fit in 16 ymm.
const std::array<DotKernel, 4> dot_kernels[2] = {dot_row<1>(std::make_index_sequence<4>{}),
                                                 dot_row<2>(std::make_index_sequence<4>{})};

void sgemm_small_n(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
                   int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads) {
  const float* bt = B;  // op(B)^T with rows of length K
  int64_t ldbt = csb;
  if (rsb != 1) {  // not transposed: gather op(B)^T [N x K]
    float* buf = tl_bpack.get(size_t(N * K));
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) buf[j * K + k] = B[k * rsb + j * csb];
    bt = buf;
    ldbt = K;
  }
  const int64_t nrb = (M + 1) / 2;
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static)
  for (int64_t rb = 0; rb < nrb; ++rb) {
    const int64_t i = rb * 2, R = std::min<int64_t>(2, M - i);
    for (int64_t j = 0; j < N; j += 4)
      dot_kernels[R - 1][std::min<int64_t>(4, N - j) - 1](K, A + i * lda, lda, bt + j * ldbt, ldbt, C + i * ldc + j,
                                                          ldc, alpha, beta);
  }
}

}  // namespace

void sgemm_avx2(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa, const float* B,
                int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads) {
  if (N <= 8 && csa == 1)
    sgemm_small_n(M, N, K, alpha, A, rsa, B, rsb, csb, beta, C, ldc, nthreads);
  else
    sgemm_blocked<Blocking>(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, ldc, nthreads);
}

int64_t sgemm_packed_b_layout_avx2(int64_t K, int64_t N, int64_t* kc, int64_t* nr) {
  return packed_b_layout<Blocking>(K, N, kc, nr);
}

void sgemm_packed_avx2(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* packed, float* C,
                       int64_t ldc, int nthreads) {
  sgemm_blocked<Blocking>(M, N, K, 1.0f, A, lda, 1, nullptr, 0, 0, 0.0f, C, ldc, nthreads, packed);
}

}  // namespace ddl::cpu::isa
