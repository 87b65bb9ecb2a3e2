// The fused exact GELU (tensor/cpu/gelu.h): erf and the backward's exp(−x²/2) are the
// functions of tensor/cpu/vec_math.h, 16 or 8 lanes wide at the AVX-512 and AVX2 levels
// (gelu_levels.h), four at the baseline (libm's without SSE2).
#include <algorithm>
#include <cmath>
#include <numbers>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/gelu.h>
#include <ddl/tensor/cpu/gelu_levels.h>
#include <ddl/tensor/cpu/vec_math.h>

namespace ddl::cpu {
namespace {
constexpr int64_t kGrain = 16384;
constexpr float kInvSqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
constexpr float kInvSqrt2Pi = static_cast<float>(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
}  // namespace

void gelu_forward_f32(const float* x, float* y, float* cdf, int64_t n) {
  const CpuLevel level = cpu_level();
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    if (level == CpuLevel::avx512) return isa::gelu_forward_avx512(x, y, cdf, b, e);
    if (level == CpuLevel::avx2) return isa::gelu_forward_avx2(x, y, cdf, b, e);
#if defined(__SSE2__)
    const __m128 half = _mm_set1_ps(0.5f), one = _mm_set1_ps(1.0f), s = _mm_set1_ps(kInvSqrt2);
    for (int64_t i = b; i < e; i += 4) {
      const int64_t w = std::min<int64_t>(4, e - i);
      const __m128 xv = vec::load4(x + i, w);
      const __m128 p = _mm_mul_ps(_mm_add_ps(vec::erf4(_mm_mul_ps(xv, s)), one), half);
      vec::store4(cdf + i, p, w);
      vec::store4(y + i, _mm_mul_ps(xv, p), w);
    }
#else
    for (int64_t i = b; i < e; ++i) {
      const float p = (std::erf(x[i] * kInvSqrt2) + 1.0f) * 0.5f;
      cdf[i] = p;
      y[i] = x[i] * p;
    }
#endif
  });
}

void gelu_backward_f32(const float* g, const float* x, const float* cdf, float* dx, int64_t n) {
  const CpuLevel level = cpu_level();
  parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    if (level == CpuLevel::avx512) return isa::gelu_backward_avx512(g, x, cdf, dx, b, e);
    if (level == CpuLevel::avx2) return isa::gelu_backward_avx2(g, x, cdf, dx, b, e);
#if defined(__SSE2__)
    const __m128 half = _mm_set1_ps(-0.5f), c = _mm_set1_ps(kInvSqrt2Pi);
    for (int64_t i = b; i < e; i += 4) {
      const int64_t w = std::min<int64_t>(4, e - i);
      const __m128 xv = vec::load4(x + i, w);
      const __m128 pdf = _mm_mul_ps(vec::exp_nonpos4(_mm_mul_ps(_mm_mul_ps(xv, xv), half)), c);
      const __m128 d = _mm_add_ps(vec::load4(cdf + i, w), _mm_mul_ps(xv, pdf));
      vec::store4(dx + i, _mm_mul_ps(vec::load4(g + i, w), d), w);
    }
#else
    for (int64_t i = b; i < e; ++i) {
      const float pdf = std::exp(x[i] * x[i] * -0.5f) * kInvSqrt2Pi;
      dx[i] = g[i] * (cdf[i] + x[i] * pdf);
    }
#endif
  });
}

}  // namespace ddl::cpu
