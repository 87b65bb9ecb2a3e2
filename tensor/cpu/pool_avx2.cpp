// The AVX2 2x2 stride-2 max pool row (pool_levels.h): 8 outputs a step, the even and
// odd columns of each input row split with in-lane shuffles and a 64-bit permute.
// Compiled with -mavx2 -mfma only (tensor/meson.build) and called only when
// cpu_level() is avx2.
#include <immintrin.h>

#include <algorithm>

#include <ddl/tensor/cpu/pool_levels.h>

namespace ddl::cpu::isa {
namespace {

inline __m256i lanes_below(int64_t n) {  // 32-bit lanes [0, n) set
  const int k = int(std::clamp<int64_t>(n, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// [x0 y0 x1 y1 x2 y2 x3 y3][x4 y4 ... x7 y7] -> [x0 .. x7] (PICK = 0) or [y0 .. y7] (PICK = 1).
template <int PICK>
inline __m256 deinterleave(__m256 lo, __m256 hi) {
  const __m256 t = _mm256_shuffle_ps(lo, hi, PICK == 0 ? _MM_SHUFFLE(2, 0, 2, 0) : _MM_SHUFFLE(3, 1, 3, 1));
  // t's 64-bit pairs are columns {0,1}, {4,5}, {2,3}, {6,7}: put them in order.
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

// n <= 8 outputs of the row pair r0, r1 (offset `top` in the plane). Full steps use plain
// loads and stores: VMASKMOV stores are microcoded on AMD's Zen cores (Agner Fog's
// instruction tables), which made this path 3x the AVX-512 one there; the tail stores
// through a local buffer.
void max2x2_row8(const float* r0, const float* r1, int64_t n, int64_t top, int64_t W, float* y, int64_t* idx) {
  __m256 x0, x1, z0, z1;
  if (n == 8) {
    x0 = _mm256_loadu_ps(r0), x1 = _mm256_loadu_ps(r0 + 8);
    z0 = _mm256_loadu_ps(r1), z1 = _mm256_loadu_ps(r1 + 8);
  } else {
    const __m256i lo_mask = lanes_below(2 * n), hi_mask = lanes_below(2 * n - 8);
    x0 = _mm256_maskload_ps(r0, lo_mask), x1 = _mm256_maskload_ps(r0 + 8, hi_mask);
    z0 = _mm256_maskload_ps(r1, lo_mask), z1 = _mm256_maskload_ps(r1 + 8, hi_mask);
  }
  const __m256 cand[3] = {deinterleave<1>(x0, x1), deinterleave<0>(z0, z1), deinterleave<1>(z0, z1)};
  const int32_t cand_off[3] = {1, int32_t(W), int32_t(W) + 1};
  __m256 m = deinterleave<0>(x0, x1);
  __m256 off = _mm256_setzero_ps();  // int32 offsets, kept in float registers for blendv
  for (int k = 0; k < 3; ++k) {
    const __m256 take =
        _mm256_or_ps(_mm256_cmp_ps(cand[k], m, _CMP_GT_OQ), _mm256_cmp_ps(cand[k], cand[k], _CMP_UNORD_Q));
    m = _mm256_blendv_ps(m, cand[k], take);
    off = _mm256_blendv_ps(off, _mm256_castsi256_ps(_mm256_set1_epi32(cand_off[k])), take);
  }
  const __m256i rel = _mm256_add_epi32(_mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14), _mm256_castps_si256(off));
  const __m256i base = _mm256_set1_epi64x(top);
  const __m256i lo = _mm256_add_epi64(base, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(rel)));
  const __m256i hi = _mm256_add_epi64(base, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(rel, 1)));
  if (n == 8) {
    _mm256_storeu_ps(y, m);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx), lo);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + 4), hi);
    return;
  }
  alignas(32) float ys[8];
  alignas(32) int64_t is[8];
  _mm256_store_ps(ys, m);
  _mm256_store_si256(reinterpret_cast<__m256i*>(is), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(is + 4), hi);
  std::copy(ys, ys + n, y);
  std::copy(is, is + n, idx);
}

}  // namespace

void max2x2_row_avx2(const float* r0, const float* r1, int64_t Q, int64_t top, int64_t W, float* y, int64_t* idx) {
  for (int64_t q = 0; q < Q; q += 8)
    max2x2_row8(r0 + 2 * q, r1 + 2 * q, std::min<int64_t>(8, Q - q), top + 2 * q, W, y + q, idx + q);
}

}  // namespace ddl::cpu::isa
