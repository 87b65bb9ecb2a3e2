// CPU pooling kernels, parallel over the N*C planes (each plane is written by
// one thread, so results never depend on the thread count). The common 2x2,
// stride-2, unpadded max pool has its own branch-light loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/pool_levels.h>
#include <ddl/tensor/ops/pool.h>

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
int64_t plane_grain(const PoolGeom& g) { return ddl::detail::grain_for(16384, g.H * g.W); }

// x: [planes, H, W] -> y, idx: [planes, P, Q]; idx = h * W + w of the first maximum (NaN wins, as PyTorch).
template <typename T>
void max_forward(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  const bool fast = g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.dh == 1 &&
                    g.dw == 1 && 2 * g.P <= g.H && 2 * g.Q <= g.W;
  const CpuLevel level = cpu_level();
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
          if constexpr (std::is_same_v<T, float>) {
            if (level == CpuLevel::avx512) {
              isa::max2x2_row_avx512(r0, r1, g.Q, top, g.W, yp + p * g.Q, ip + p * g.Q);
              continue;
            }
            if (level == CpuLevel::avx2) {
              isa::max2x2_row_avx2(r0, r1, g.Q, top, g.W, yp + p * g.Q, ip + p * g.Q);
              continue;
            }
          }
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
  parallel_for(0, planes, ddl::detail::grain_for(16384, hw), [&](int64_t b, int64_t e) {
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
