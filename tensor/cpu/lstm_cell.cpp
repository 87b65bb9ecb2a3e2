// The fused LSTM step (tensor/cpu/lstm_cell.h): four lanes at a time with the SSE2
// sigmoid/tanh of tensor/cpu/vec_math.h, and a scalar std:: path elsewhere. The products
// are rounded one at a time, in the order of the unfused ops they replace.
#include <algorithm>
#include <cmath>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/lstm_cell.h>
#include <ddl/tensor/cpu/vec_math.h>

namespace ddl::cpu {
namespace {

#if !defined(__SSE2__)
float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
#endif

}  // namespace

void lstm_cell_forward_f32(const float* gates, const float* c_prev, float* acts, float* c, float* h, int64_t batch,
                           int64_t hs) {
  parallel_for(0, batch, ddl::detail::grain_for(4096, hs), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* g = gates + b * 4 * hs;
      float* a = acts + b * 4 * hs;
      const float* cp = c_prev + b * hs;
      float* cb = c + b * hs;
      float* hb = h + b * hs;
#if defined(__SSE2__)
      using namespace vec;
      for (int64_t j = 0; j < hs; j += 4) {
        const int64_t n = std::min<int64_t>(4, hs - j);
        const __m128 i = sigmoid4(vec::load4(g + j, n)), f = sigmoid4(vec::load4(g + hs + j, n));
        const __m128 gg = tanh4(vec::load4(g + 2 * hs + j, n)), o = sigmoid4(vec::load4(g + 3 * hs + j, n));
        const __m128 cn = _mm_add_ps(_mm_mul_ps(f, vec::load4(cp + j, n)), _mm_mul_ps(i, gg));
        vec::store4(a + j, i, n);
        vec::store4(a + hs + j, f, n);
        vec::store4(a + 2 * hs + j, gg, n);
        vec::store4(a + 3 * hs + j, o, n);
        vec::store4(cb + j, cn, n);
        vec::store4(hb + j, _mm_mul_ps(o, tanh4(cn)), n);
      }
#else
      for (int64_t j = 0; j < hs; ++j) {
        const float i = sigmoid(g[j]), f = sigmoid(g[hs + j]), gg = std::tanh(g[2 * hs + j]), o = sigmoid(g[3 * hs + j]);
        a[j] = i, a[hs + j] = f, a[2 * hs + j] = gg, a[3 * hs + j] = o;
        cb[j] = f * cp[j] + i * gg;
        hb[j] = o * std::tanh(cb[j]);
      }
#endif
    }
  });
}

void lstm_cell_backward_f32(const float* acts, const float* c, const float* c_prev, const float* dh, float* dc,
                            float* da, int64_t batch, int64_t hs) {
  parallel_for(0, batch, ddl::detail::grain_for(4096, hs), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* a = acts + b * 4 * hs;
      const float* cb = c + b * hs;
      const float* cp = c_prev + b * hs;
      const float* dhb = dh + b * hs;
      float* dcb = dc + b * hs;
      float* d = da + b * 4 * hs;
#if defined(__SSE2__)
      using namespace vec;
      const __m128 one = _mm_set1_ps(1.0f);
      for (int64_t j = 0; j < hs; j += 4) {
        const int64_t n = std::min<int64_t>(4, hs - j);
        const __m128 i = vec::load4(a + j, n), f = vec::load4(a + hs + j, n), gg = vec::load4(a + 2 * hs + j, n),
                     o = vec::load4(a + 3 * hs + j, n);
        const __m128 tc = tanh4(vec::load4(cb + j, n)), dhv = vec::load4(dhb + j, n);
        // dc += (dh·o)·(1 − tanh(c)²)
        const __m128 dcv =
            _mm_add_ps(vec::load4(dcb + j, n), _mm_mul_ps(_mm_mul_ps(dhv, o), _mm_sub_ps(one, _mm_mul_ps(tc, tc))));
        const auto sig_back = [&](__m128 gr, __m128 y) { return _mm_mul_ps(_mm_mul_ps(gr, y), _mm_sub_ps(one, y)); };
        vec::store4(d + j, sig_back(_mm_mul_ps(dcv, gg), i), n);
        vec::store4(d + hs + j, sig_back(_mm_mul_ps(dcv, vec::load4(cp + j, n)), f), n);
        vec::store4(d + 2 * hs + j, _mm_mul_ps(_mm_mul_ps(dcv, i), _mm_sub_ps(one, _mm_mul_ps(gg, gg))), n);
        vec::store4(d + 3 * hs + j, sig_back(_mm_mul_ps(dhv, tc), o), n);
        vec::store4(dcb + j, _mm_mul_ps(dcv, f), n);
      }
#else
      for (int64_t j = 0; j < hs; ++j) {
        const float i = a[j], f = a[hs + j], gg = a[2 * hs + j], o = a[3 * hs + j];
        const float tc = std::tanh(cb[j]);
        const float dcv = dcb[j] + (dhb[j] * o) * (1.0f - tc * tc);
        d[j] = (dcv * gg) * i * (1.0f - i);
        d[hs + j] = (dcv * cp[j]) * f * (1.0f - f);
        d[2 * hs + j] = (dcv * i) * (1.0f - gg * gg);
        d[3 * hs + j] = (dhb[j] * tc) * o * (1.0f - o);
        dcb[j] = dcv * f;
      }
#endif
    }
  });
}

}  // namespace ddl::cpu
