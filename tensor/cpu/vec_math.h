#pragma once
// exp, sigmoid and tanh on four float lanes with SSE2 (part of every x86-64 CPU), for the
// portable CPU kernels of sequence models (softmax_rows.cpp, lstm_cell.cpp, gelu.cpp). exp is Cephes'
// expf (Cody-Waite range reduction, degree-6 polynomial, within 2 ulp); tanh is Cephes'
// tanhf (an odd polynomial below 0.625, (1 − e)/(1 + e) with e = exp(−2|x|) above); erf is
// x·P(x²) below 1 and 1 − exp(−x²)·Q(x) up to 4 (±1 beyond, where erf rounds to 1), with P and Q
// least-squares fits in float64 to erf(x)/x and erfc(x)·exp(x²) (within 3 ulp over the floats).
// Include only from files compiled with the baseline flags (tensor/meson.build).
#if defined(__SSE2__)
#include <emmintrin.h>

#include <cstdint>

namespace ddl::cpu::vec {

// Loads / stores n <= 4 floats, a tail through a zeroed buffer: a chunk's tail goes through
// the same four-lane math, so an element's value never depends on where chunks end.
inline __m128 load4(const float* p, int64_t n) {
  if (n == 4) return _mm_loadu_ps(p);
  alignas(16) float b[4] = {0, 0, 0, 0};
  for (int64_t k = 0; k < n; ++k) b[k] = p[k];
  return _mm_load_ps(b);
}
inline void store4(float* p, __m128 v, int64_t n) {
  if (n == 4) return _mm_storeu_ps(p, v);
  alignas(16) float b[4];
  _mm_store_ps(b, v);
  for (int64_t k = 0; k < n; ++k) p[k] = b[k];
}

// exp(x) for x <= 0 or NaN; 0 below −87 (where it would be subnormal).
inline __m128 exp_nonpos4(__m128 x) {
  const __m128 lo = _mm_set1_ps(-87.0f), magic = _mm_set1_ps(12582912.0f);
  const __m128 xc = _mm_max_ps(x, lo);  // a NaN lane becomes −87 here and NaN again below
  // n = round(x / ln 2) with the 1.5·2^23 trick (no roundps at this level).
  const __m128 t = _mm_add_ps(_mm_mul_ps(xc, _mm_set1_ps(1.44269504088896341f)), magic);
  const __m128 n = _mm_sub_ps(t, magic);
  const __m128i ni = _mm_sub_epi32(_mm_castps_si128(t), _mm_castps_si128(magic));
  const __m128 r =
      _mm_add_ps(_mm_sub_ps(xc, _mm_mul_ps(n, _mm_set1_ps(0.693359375f))), _mm_mul_ps(n, _mm_set1_ps(2.12194440e-4f)));
  __m128 p = _mm_set1_ps(1.9875691500e-4f);
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.3981999507e-3f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(8.3334519073e-3f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(4.1665795894e-2f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.6666665459e-1f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(5.0000001201e-1f));
  p = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_mul_ps(p, r), r), r), _mm_set1_ps(1.0f));
  const __m128 e = _mm_mul_ps(p, _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(ni, _mm_set1_epi32(127)), 23)));
  const __m128 z = _mm_andnot_ps(_mm_cmplt_ps(x, lo), e);
  const __m128 nan = _mm_cmpunord_ps(x, x);
  return _mm_or_ps(_mm_and_ps(nan, x), _mm_andnot_ps(nan, z));
}

inline __m128 select4(__m128 mask, __m128 a, __m128 b) {
  return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}

inline __m128 abs4(__m128 x) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), x); }

// 1 / (1 + exp(−x)), as e/(1 + e) for x < 0 (e = exp(−|x|) never overflows).
inline __m128 sigmoid4(__m128 x) {
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 e = exp_nonpos4(_mm_sub_ps(_mm_setzero_ps(), abs4(x)));
  const __m128 q = _mm_div_ps(one, _mm_add_ps(one, e));
  const __m128 s = select4(_mm_cmplt_ps(x, _mm_setzero_ps()), _mm_mul_ps(e, q), q);
  return select4(_mm_cmpunord_ps(x, x), x, s);
}

inline __m128 tanh4(__m128 x) {
  const __m128 one = _mm_set1_ps(1.0f), sign = _mm_and_ps(x, _mm_set1_ps(-0.0f));
  const __m128 ax = abs4(x);
  const __m128 e = exp_nonpos4(_mm_mul_ps(ax, _mm_set1_ps(-2.0f)));
  const __m128 big = _mm_or_ps(_mm_div_ps(_mm_sub_ps(one, e), _mm_add_ps(one, e)), sign);
  const __m128 z = _mm_mul_ps(x, x);
  __m128 p = _mm_set1_ps(-5.70498872745e-3f);
  p = _mm_add_ps(_mm_mul_ps(p, z), _mm_set1_ps(2.06390887954e-2f));
  p = _mm_add_ps(_mm_mul_ps(p, z), _mm_set1_ps(-5.37397155531e-2f));
  p = _mm_add_ps(_mm_mul_ps(p, z), _mm_set1_ps(1.33314422036e-1f));
  p = _mm_add_ps(_mm_mul_ps(p, z), _mm_set1_ps(-3.33332819422e-1f));
  const __m128 small = _mm_add_ps(_mm_mul_ps(_mm_mul_ps(p, z), x), x);
  const __m128 t = select4(_mm_cmplt_ps(ax, _mm_set1_ps(0.625f)), small, big);
  return select4(_mm_cmpunord_ps(x, x), x, t);
}

inline __m128 erf4(__m128 x) {
  const __m128 sign = _mm_and_ps(x, _mm_set1_ps(-0.0f)), ax = abs4(x), one = _mm_set1_ps(1.0f);
  const __m128 t = _mm_mul_ps(ax, ax);
  static constexpr float kP[] = {7.933493854830466e-05f, -0.0008034846638721882f, 0.005191218375906694f,
                                 -0.026855399451167983f, 0.1128362572506f,        -0.37612629877673287f,
                                 1.1283791665931535f};
  __m128 p = _mm_set1_ps(kP[0]);
  for (int i = 1; i < 7; ++i) p = _mm_add_ps(_mm_mul_ps(p, t), _mm_set1_ps(kP[i]));
  const __m128 small = _mm_mul_ps(ax, p);
  // Q in u = (|x| − 2.5)/1.5, u in [−1, 1] on [1, 4].
  static constexpr float kQ[] = {1.3819089767278472e-05f,  -3.6928723674507874e-05f, 5.4947246125828696e-05f,
                                 -0.00014394859761788527f, 0.00041450809994835543f,  -0.0010171177745617553f,
                                 0.002401701694517434f,    -0.005567332909432939f,   0.012489703671659644f,
                                 -0.02700572528975193f,    0.05611047258427116f,     -0.11152100469538159f,
                                 0.21080636427594243f};
  const __m128 u = _mm_mul_ps(_mm_sub_ps(ax, _mm_set1_ps(2.5f)), _mm_set1_ps(1.0f / 1.5f));
  __m128 q = _mm_set1_ps(kQ[0]);
  for (int i = 1; i < 13; ++i) q = _mm_add_ps(_mm_mul_ps(q, u), _mm_set1_ps(kQ[i]));
  const __m128 big = _mm_sub_ps(one, _mm_mul_ps(exp_nonpos4(_mm_sub_ps(_mm_setzero_ps(), t)), q));
  __m128 r = select4(_mm_cmplt_ps(ax, one), small, select4(_mm_cmplt_ps(ax, _mm_set1_ps(4.0f)), big, one));
  r = _mm_or_ps(r, sign);
  return select4(_mm_cmpunord_ps(x, x), x, r);
}

}  // namespace ddl::cpu::vec
#endif
