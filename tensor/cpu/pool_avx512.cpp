// The AVX-512 2x2 stride-2 max pool row (pool_levels.h). Compiled with -mavx512f/vl/bw/dq
// only (tensor/meson.build) and called only when cpu_level() is avx512.
#include <immintrin.h>

#include <algorithm>

#include <ddl/tensor/cpu/pool_levels.h>

namespace ddl::cpu::isa {
namespace {

// The 2x2 stride-2 max of one row pair, 16 outputs at a time: r0, r1 are the
// two input rows (offset `top` in the plane), n <= 16 outputs. Same choices as
// the scalar loop: candidates in window order, strict >, NaN wins.
void max2x2_row16(const float* r0, const float* r1, int64_t n, int64_t top, int64_t W, float* y, int64_t* idx) {
  const auto mask = [](int64_t k) {
    return k >= 16 ? __mmask16(0xFFFF) : k <= 0 ? __mmask16(0) : __mmask16((1u << k) - 1);
  };
  const __mmask16 lo = mask(2 * n), hi = mask(2 * n - 16), out = mask(n);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512 x0 = _mm512_maskz_loadu_ps(lo, r0), x1 = _mm512_maskz_loadu_ps(hi, r0 + 16);
  const __m512 z0 = _mm512_maskz_loadu_ps(lo, r1), z1 = _mm512_maskz_loadu_ps(hi, r1 + 16);
  const __m512 cand[3] = {_mm512_permutex2var_ps(x0, odd, x1), _mm512_permutex2var_ps(z0, even, z1),
                          _mm512_permutex2var_ps(z0, odd, z1)};
  const int32_t cand_off[3] = {1, int32_t(W), int32_t(W) + 1};
  __m512 m = _mm512_permutex2var_ps(x0, even, x1);
  __m512i off = _mm512_setzero_si512();
  for (int k = 0; k < 3; ++k) {
    const __mmask16 take =
        _mm512_cmp_ps_mask(cand[k], m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(cand[k], cand[k], _CMP_UNORD_Q);
    m = _mm512_mask_mov_ps(m, take, cand[k]);
    off = _mm512_mask_mov_epi32(off, take, _mm512_set1_epi32(cand_off[k]));
  }
  _mm512_mask_storeu_ps(y, out, m);
  const __m512i rel = _mm512_add_epi32(even, off);  // 2q + offset within the window
  const __m512i base = _mm512_set1_epi64(top);
  _mm512_mask_storeu_epi64(idx, __mmask8(out),
                           _mm512_add_epi64(base, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(rel))));
  _mm512_mask_storeu_epi64(idx + 8, __mmask8(out >> 8),
                           _mm512_add_epi64(base, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(rel, 1))));
}

}  // namespace

void max2x2_row_avx512(const float* r0, const float* r1, int64_t Q, int64_t top, int64_t W, float* y, int64_t* idx) {
  for (int64_t q = 0; q < Q; q += 16)
    max2x2_row16(r0 + 2 * q, r1 + 2 * q, std::min<int64_t>(16, Q - q), top + 2 * q, W, y + q, idx + q);
}

}  // namespace ddl::cpu::isa
