// Last-dim softmax kernels for float32 (tensor/cpu/softmax_rows.h). exp is a branch-free
// polynomial (Cephes' expf: Cody-Waite range reduction to [-ln2/2, ln2/2] and a degree-6
// polynomial, within 2 ulp: tensor/cpu/vec_math.h, whose four-lane version the row loops
// use), sums stay in double as in tensor/kernels/softmax_functors.h.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/softmax_rows.h>
#include <ddl/tensor/cpu/vec_math.h>

namespace ddl::cpu {
namespace {

// exp(x) in float for x <= 0 or NaN (softmax's x − max).
// Below about −87.3 the result would be subnormal: it is 0, as with flush-to-zero.
inline float exp_nonpos(float x) {
  const float xc = std::max(x, -87.0f);
  const float fx = xc * 1.44269504088896341f;
  // Round to nearest with the 1.5·2^23 trick (no roundps at the baseline level).
  const float magic = 12582912.0f;
  const float t = fx + magic;
  const float n = t - magic;
  const int32_t ni = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(magic);
  const float r = xc - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const float e = p * std::bit_cast<float>((ni + 127) << 23);
  const float z = x < -87.0f ? 0.0f : e;
  return x != x ? x : z;
}

// Row max as softmax_math::row_max (NaNs skipped) and y = exp(x − max); returns Σ y in double.
double exp_row(const float* x, float* y, int64_t d, float& max_out) {
  float mx = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
#if defined(__SSE2__)
  __m128 m4 = _mm_set1_ps(mx);
  for (; i + 4 <= d; i += 4) m4 = _mm_max_ps(_mm_loadu_ps(x + i), m4);  // keeps m4 where x is NaN
  alignas(16) float m[4];
  _mm_store_ps(m, m4);
  for (const float v : m) mx = mx < v ? v : mx;
#endif
  for (; i < d; ++i) mx = mx < x[i] ? x[i] : mx;
  max_out = mx;
  i = 0;
#if defined(__SSE2__)
  const __m128 mxv = _mm_set1_ps(mx);
  __m128d s0 = _mm_setzero_pd(), s1 = _mm_setzero_pd();
  for (; i + 4 <= d; i += 4) {
    const __m128 e = vec::exp_nonpos4(_mm_sub_ps(_mm_loadu_ps(x + i), mxv));
    _mm_storeu_ps(y + i, e);
    s0 = _mm_add_pd(s0, _mm_cvtps_pd(e));
    s1 = _mm_add_pd(s1, _mm_cvtps_pd(_mm_movehl_ps(e, e)));
  }
  alignas(16) double s[2];
  _mm_store_pd(s, _mm_add_pd(s0, s1));
  double sum = s[0] + s[1];
#else
  double sum = 0.0;
#endif
  for (; i < d; ++i) {
    y[i] = exp_nonpos(x[i] - mx);
    sum += static_cast<double>(y[i]);
  }
  return sum;
}

// Σ v[i] in double, in eight interleaved partial sums (a fixed order whatever the threads).
template <typename F>
double sum8(int64_t d, const F& v) {
  double s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= d; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += static_cast<double>(v(i + k));
  for (; i < d; ++i) s[i & 7] += static_cast<double>(v(i));
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

}  // namespace

void softmax_rows_f32(const float* x, float* y, int64_t rows, int64_t d, bool log) {
  parallel_for(0, rows, ddl::detail::grain_for(8192, d), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * d;
      float* yr = y + r * d;
      float mx;
      const double s = exp_row(xr, yr, d, mx);
      if (log) {
        const double ls = std::log(s);
        for (int64_t i = 0; i < d; ++i) yr[i] = static_cast<float>(static_cast<double>(xr[i] - mx) - ls);
      } else {
        const double inv = 1.0 / s;
        for (int64_t i = 0; i < d; ++i) yr[i] = static_cast<float>(yr[i] * inv);
      }
    }
  });
}

void softmax_rows_backward_f32(const float* gy, const float* y, float* gx, int64_t rows, int64_t d, bool log) {
  parallel_for(0, rows, ddl::detail::grain_for(8192, d), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* g = gy + r * d;
      const float* yr = y + r * d;
      float* o = gx + r * d;
      if (log) {
        const double s = sum8(d, [&](int64_t i) { return g[i]; });
        for (int64_t i = 0; i < d; ++i) o[i] = static_cast<float>(g[i] - std::exp(yr[i]) * s);
      } else {
        const double s = sum8(d, [&](int64_t i) { return g[i] * yr[i]; });
        for (int64_t i = 0; i < d; ++i) o[i] = static_cast<float>(yr[i] * (g[i] - s));
      }
    }
  });
}

}  // namespace ddl::cpu
