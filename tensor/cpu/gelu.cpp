// The fused exact GELU (tensor/cpu/gelu.h). erf stays libm's (std::erf, as the unfused op);
// the backward's exp(−x²/2) is the four-lane exp of tensor/cpu/vec_math.h.
#include <algorithm>
#include <cmath>
#include <numbers>

#include <ddl/tensor/cpu/gelu.h>
#include <ddl/tensor/cpu/vec_math.h>
#include <ddl/tensor/parallel.h>

namespace ddl::cpu {
namespace {
constexpr int64_t kGrain = 16384;
constexpr float kInvSqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
constexpr float kInvSqrt2Pi = static_cast<float>(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
}  // namespace

void gelu_forward_f32(const float* x, float* y, float* cdf, int64_t n) {
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float p = (std::erf(x[i] * kInvSqrt2) + 1.0f) * 0.5f;
      cdf[i] = p;
      y[i] = x[i] * p;
    }
  });
}

void gelu_backward_f32(const float* g, const float* x, const float* cdf, float* dx, int64_t n) {
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    int64_t i = b;
#if defined(__SSE2__)
    const __m128 half = _mm_set1_ps(-0.5f), c = _mm_set1_ps(kInvSqrt2Pi);
    for (; i + 4 <= e; i += 4) {
      const __m128 xv = _mm_loadu_ps(x + i);
      const __m128 pdf = _mm_mul_ps(vec::exp_nonpos4(_mm_mul_ps(_mm_mul_ps(xv, xv), half)), c);
      const __m128 d = _mm_add_ps(_mm_loadu_ps(cdf + i), _mm_mul_ps(xv, pdf));
      _mm_storeu_ps(dx + i, _mm_mul_ps(_mm_loadu_ps(g + i), d));
    }
#endif
    for (; i < e; ++i) {
      const float pdf = std::exp(x[i] * x[i] * -0.5f) * kInvSqrt2Pi;
      dx[i] = g[i] * (cdf[i] + x[i] * pdf);
    }
  });
}

}  // namespace ddl::cpu
