// CPU pooling kernels, parallel over the N*C planes (each plane is written by
// one thread, so results never depend on the thread count). The common 2x2,
// stride-2, unpadded max pool has its own branch-light loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <ddl/tensor/parallel.h>
#include <ddl/tensor/pool.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace ddl::cpu {
namespace {

struct PoolGeom {
  int64_t planes, H, W, P, Q, kh, kw, sh, sw, ph, pw, dh, dw;
};

PoolGeom make_geom(const Shape& xs, const Shape& ys, const Pool2dParams& p) {
  return {xs[0] * xs[1], xs[2],       xs[3],        ys[2],        ys[3],         p.kernel[0],  p.kernel[1],
          p.stride[0],   p.stride[1], p.padding[0], p.padding[1], p.dilation[0], p.dilation[1]};
}

// Planes per parallel task: about 16K input elements.
int64_t plane_grain(const PoolGeom& g) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(g.H * g.W, 1)); }

#if defined(__AVX512F__)
// The 2x2 stride-2 max of one row pair, 16 outputs at a time: r0, r1 are the
// two input rows (offset `top` in the plane), n <= 16 outputs. Same choices as
// the scalar loop: candidates in window order, strict >, NaN wins.
inline void max2x2_row16(const float* r0, const float* r1, int64_t n, int64_t top, int64_t W, float* y, int64_t* idx) {
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
#endif

// x: [planes, H, W] -> y, idx: [planes, P, Q]; idx = h * W + w of the first maximum (NaN wins, as PyTorch).
template <typename T>
void max_forward(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  const bool fast = g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.dh == 1 &&
                    g.dw == 1 && 2 * g.P <= g.H && 2 * g.Q <= g.W;
  parallel_for(0, g.planes, plane_grain(g), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* xp = x + pl * g.H * g.W;
      T* yp = y + pl * g.P * g.Q;
      int64_t* ip = idx + pl * g.P * g.Q;
      if (fast) {
        for (int64_t p = 0; p < g.P; ++p) {
          const T* r0 = xp + 2 * p * g.W;
          const T* r1 = r0 + g.W;
          const int64_t top = 2 * p * g.W;
#if defined(__AVX512F__)
          if constexpr (std::is_same_v<T, float>) {
            for (int64_t q = 0; q < g.Q; q += 16)
              max2x2_row16(r0 + 2 * q, r1 + 2 * q, std::min<int64_t>(16, g.Q - q), top + 2 * q, g.W, yp + p * g.Q + q,
                           ip + p * g.Q + q);
            continue;
          }
#endif
          for (int64_t q = 0; q < g.Q; ++q) {
            // Candidates in window order; strict > keeps the first maximum.
            // Selects, not branches: on real activations the winner is random,
            // and mispredicted branches cost more than the comparisons.
            const T a = r0[2 * q], bb = r0[2 * q + 1], c = r1[2 * q], d = r1[2 * q + 1];
            const bool take_b = bb > a || bb != bb;
            T m = take_b ? bb : a;
            int64_t off = take_b ? 1 : 0;
            const bool take_c = c > m || c != c;
            m = take_c ? c : m;
            off = take_c ? g.W : off;
            const bool take_d = d > m || d != d;
            m = take_d ? d : m;
            off = take_d ? g.W + 1 : off;
            yp[p * g.Q + q] = m;
            ip[p * g.Q + q] = top + 2 * q + off;
          }
        }
        continue;
      }
      for (int64_t p = 0; p < g.P; ++p) {
        int64_t h0 = p * g.sh - g.ph;
        const int64_t h1 = std::min(h0 + (g.kh - 1) * g.dh + 1, g.H);
        while (h0 < 0) h0 += g.dh;
        for (int64_t q = 0; q < g.Q; ++q) {
          int64_t w0 = q * g.sw - g.pw;
          const int64_t w1 = std::min(w0 + (g.kw - 1) * g.dw + 1, g.W);
          while (w0 < 0) w0 += g.dw;
          T m = -std::numeric_limits<T>::infinity();
          int64_t mi = h0 * g.W + w0;
          for (int64_t h = h0; h < h1; h += g.dh) {
            for (int64_t w = w0; w < w1; w += g.dw) {
              const T v = xp[h * g.W + w];
              if (v > m || std::isnan(v)) m = v, mi = h * g.W + w;
            }
          }
          yp[p * g.Q + q] = m;
          ip[p * g.Q + q] = mi;
        }
      }
    }
  });
}

// gy, idx: [planes, P*Q] -> gx: [planes, H*W], zeroed then scatter-added.
template <typename T>
void max_backward(int64_t planes, int64_t hw, int64_t pq, const T* gy, const int64_t* idx, T* gx) {
  parallel_for(0, planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(hw, 1)), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      T* gp = gx + pl * hw;
      std::fill(gp, gp + hw, T(0));
      const T* g = gy + pl * pq;
      const int64_t* ip = idx + pl * pq;
      for (int64_t i = 0; i < pq; ++i) {
        DDL_CHECK(ip[i] >= 0 && ip[i] < hw, "max_pool2d_backward: index ", ip[i], " out of range for a plane of ", hw,
                  " elements");
        gp[ip[i]] += g[i];
      }
    }
  });
}

// The window of output (p, q) clipped to the input, and PyTorch's divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

inline AvgWindow avg_window(const PoolGeom& g, bool include_pad, int64_t p, int64_t q) {
  int64_t h0 = p * g.sh - g.ph, w0 = q * g.sw - g.pw;
  int64_t h1 = std::min(h0 + g.kh, g.H + g.ph), w1 = std::min(w0 + g.kw, g.W + g.pw);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.H), w1 = std::min(w1, g.W);
  return {h0, h1, w0, w1, include_pad ? padded : (h1 - h0) * (w1 - w0)};
}

// x: [planes, H, W] -> y: [planes, P, Q]
template <typename T>
void avg_forward(const PoolGeom& g, bool include_pad, const T* x, T* y) {
  parallel_for(0, g.planes, plane_grain(g), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* xp = x + pl * g.H * g.W;
      T* yp = y + pl * g.P * g.Q;
      for (int64_t p = 0; p < g.P; ++p) {
        for (int64_t q = 0; q < g.Q; ++q) {
          const AvgWindow a = avg_window(g, include_pad, p, q);
          T s = 0;
          for (int64_t h = a.h0; h < a.h1; ++h)
            for (int64_t w = a.w0; w < a.w1; ++w) s += xp[h * g.W + w];
          yp[p * g.Q + q] = a.divisor > 0 ? s / T(a.divisor) : T(0);
        }
      }
    }
  });
}

// gy: [planes, P, Q] -> gx: [planes, H, W], each window gets gy / divisor.
template <typename T>
void avg_backward(const PoolGeom& g, bool include_pad, const T* gy, T* gx) {
  parallel_for(0, g.planes, plane_grain(g), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      T* gp = gx + pl * g.H * g.W;
      const T* yp = gy + pl * g.P * g.Q;
      std::fill(gp, gp + g.H * g.W, T(0));
      for (int64_t p = 0; p < g.P; ++p) {
        for (int64_t q = 0; q < g.Q; ++q) {
          const AvgWindow a = avg_window(g, include_pad, p, q);
          if (a.divisor <= 0) continue;
          const T v = yp[p * g.Q + q] / T(a.divisor);
          for (int64_t h = a.h0; h < a.h1; ++h)
            for (int64_t w = a.w0; w < a.w1; ++w) gp[h * g.W + w] += v;
        }
      }
    }
  });
}

void max_pool2d_forward_cpu(const Tensor& x, const Tensor& y, const Tensor& idx, const Pool2dParams& p) {
  const PoolGeom g = make_geom(x.shape(), y.shape(), p);
  DDL_DISPATCH_FLOAT(x.dtype(), "max_pool2d",
                     [&] { max_forward<scalar_t>(g, x.data<scalar_t>(), y.data<scalar_t>(), idx.data<int64_t>()); });
}

// disjoint changes nothing here: the CPU adds each plane's outputs in turn either way.
void max_pool2d_backward_cpu(const Tensor& gy, const Tensor& idx, const Tensor& gx, bool /*disjoint*/) {
  DDL_DISPATCH_FLOAT(gy.dtype(), "max_pool2d_backward", [&] {
    max_backward<scalar_t>(gx.size(0) * gx.size(1), gx.size(2) * gx.size(3), gy.size(2) * gy.size(3),
                           gy.data<scalar_t>(), idx.data<int64_t>(), gx.data<scalar_t>());
  });
}

void avg_pool2d_forward_cpu(const Tensor& x, const Tensor& y, const Pool2dParams& p) {
  const PoolGeom g = make_geom(x.shape(), y.shape(), p);
  if (x.dtype() == DType::Int64)  // integer division truncates, as PyTorch's
    return avg_forward<int64_t>(g, p.count_include_pad, x.data<int64_t>(), y.data<int64_t>());
  DDL_DISPATCH_FLOAT(x.dtype(), "avg_pool2d",
                     [&] { avg_forward<scalar_t>(g, p.count_include_pad, x.data<scalar_t>(), y.data<scalar_t>()); });
}

void avg_pool2d_backward_cpu(const Tensor& gy, const Tensor& gx, const Pool2dParams& p) {
  const PoolGeom g = make_geom(gx.shape(), gy.shape(), p);
  DDL_DISPATCH_FLOAT(gy.dtype(), "avg_pool2d_backward",
                     [&] { avg_backward<scalar_t>(g, p.count_include_pad, gy.data<scalar_t>(), gx.data<scalar_t>()); });
}

using kernels::avg_pool2d_backward_kernel;
using kernels::avg_pool2d_forward_kernel;
using kernels::max_pool2d_backward_kernel;
using kernels::max_pool2d_forward_kernel;
DDL_REGISTER_KERNEL(max_pool2d_forward_kernel, CPU, &max_pool2d_forward_cpu);
DDL_REGISTER_KERNEL(max_pool2d_backward_kernel, CPU, &max_pool2d_backward_cpu);
DDL_REGISTER_KERNEL(avg_pool2d_forward_kernel, CPU, &avg_pool2d_forward_cpu);
DDL_REGISTER_KERNEL(avg_pool2d_backward_kernel, CPU, &avg_pool2d_backward_cpu);

}  // namespace
}  // namespace ddl::cpu
