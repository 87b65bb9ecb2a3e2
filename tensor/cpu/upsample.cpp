// CPU upsample2d kernels (nearest, bilinear), parallel over the N*C planes;
// each plane is written by one thread in a fixed order, so results (the
// backward's sums included) never depend on the thread count. The index and
// weight formulas are PyTorch 1.13's (aten/src/ATen/native/UpSample.h).
#include "tensor/upsample.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/parallel.h"

namespace ddl::cpu {
namespace {

// PyTorch's compute_scales_value: 1/scale when a scale was given, else in/out.
template <typename T>
T scale_value(double scale, int64_t in, int64_t out) {
  return scale > 0 ? static_cast<T>(1.0 / scale) : static_cast<T>(in) / static_cast<T>(out);
}

// Nearest source index of output index i (PyTorch's nearest_idx, float math).
int64_t nearest_src(int64_t i, int64_t in, int64_t out, double scale) {
  if (out == in) return i;
  if (out == 2 * in) return i >> 1;
  const float s = scale_value<float>(scale, in, out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * s)), in - 1);
}

// One output index's two source indices and weights along a dim (PyTorch's
// compute_source_index_and_lambda).
template <typename T>
struct Lerp {
  int64_t i0, i1;
  T l0, l1;
};

template <typename T>
std::vector<Lerp<T>> lerp_table(int64_t in, int64_t out, double scale, bool align_corners) {
  std::vector<Lerp<T>> t(static_cast<size_t>(out));
  const T ratio = align_corners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0))
                                : scale_value<T>(scale, in, out);
  for (int64_t i = 0; i < out; ++i) {
    if (in == out) {
      t[i] = {i, i, T(1), T(0)};
      continue;
    }
    T src = align_corners ? ratio * static_cast<T>(i) : ratio * (static_cast<T>(i) + T(0.5)) - T(0.5);
    if (!align_corners && src < 0) src = 0;
    const int64_t i0 = static_cast<int64_t>(src);
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    const T l1 = std::min(std::max(src - static_cast<T>(i0), T(0)), T(1));
    t[i] = {i0, i1, T(1) - l1, l1};
  }
  return t;
}

struct Geom {
  int64_t planes, H, W, P, Q;
  int64_t grain() const { return std::max<int64_t>(1, 16384 / std::max<int64_t>(P * Q, 1)); }
};

// x: [planes, H, W] -> y: [planes, P, Q] (forward), or the adjoint gy -> gx.
template <typename T>
void run(const Geom& g, const Upsample2dParams& p, const T* src, T* dst, bool backward) {
  if (p.mode == InterpolateMode::Nearest) {
    std::vector<int64_t> rows(g.P), cols(g.Q);
    for (int64_t i = 0; i < g.P; ++i) rows[i] = nearest_src(i, g.H, g.P, p.scales[0]);
    for (int64_t j = 0; j < g.Q; ++j) cols[j] = nearest_src(j, g.W, g.Q, p.scales[1]);
    parallel_for(0, g.planes, g.grain(), [&](int64_t b, int64_t e) {
      for (int64_t pl = b; pl < e; ++pl) {
        if (!backward) {
          const T* xp = src + pl * g.H * g.W;
          T* yp = dst + pl * g.P * g.Q;
          for (int64_t i = 0; i < g.P; ++i)
            for (int64_t j = 0; j < g.Q; ++j) yp[i * g.Q + j] = xp[rows[i] * g.W + cols[j]];
        } else {
          const T* gy = src + pl * g.P * g.Q;
          T* gx = dst + pl * g.H * g.W;
          std::fill(gx, gx + g.H * g.W, T(0));
          for (int64_t i = 0; i < g.P; ++i)
            for (int64_t j = 0; j < g.Q; ++j) gx[rows[i] * g.W + cols[j]] += gy[i * g.Q + j];
        }
      }
    });
    return;
  }
  const auto rt = lerp_table<T>(g.H, g.P, p.scales[0], p.align_corners);
  const auto ct = lerp_table<T>(g.W, g.Q, p.scales[1], p.align_corners);
  parallel_for(0, g.planes, g.grain(), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      if (!backward) {
        const T* xp = src + pl * g.H * g.W;
        T* yp = dst + pl * g.P * g.Q;
        for (int64_t i = 0; i < g.P; ++i) {
          const Lerp<T>& r = rt[i];
          const T* x0 = xp + r.i0 * g.W;
          const T* x1 = xp + r.i1 * g.W;
          for (int64_t j = 0; j < g.Q; ++j) {
            const Lerp<T>& c = ct[j];
            yp[i * g.Q + j] = r.l0 * (c.l0 * x0[c.i0] + c.l1 * x0[c.i1]) + r.l1 * (c.l0 * x1[c.i0] + c.l1 * x1[c.i1]);
          }
        }
      } else {
        const T* gy = src + pl * g.P * g.Q;
        T* gx = dst + pl * g.H * g.W;
        std::fill(gx, gx + g.H * g.W, T(0));
        for (int64_t i = 0; i < g.P; ++i) {
          const Lerp<T>& r = rt[i];
          for (int64_t j = 0; j < g.Q; ++j) {
            const Lerp<T>& c = ct[j];
            const T v = gy[i * g.Q + j];
            gx[r.i0 * g.W + c.i0] += r.l0 * c.l0 * v;
            gx[r.i0 * g.W + c.i1] += r.l0 * c.l1 * v;
            gx[r.i1 * g.W + c.i0] += r.l1 * c.l0 * v;
            gx[r.i1 * g.W + c.i1] += r.l1 * c.l1 * v;
          }
        }
      }
    }
  });
}

void upsample2d_forward_cpu(const Tensor& x, const Tensor& y, const Upsample2dParams& p) {
  const Geom g{x.size(0) * x.size(1), x.size(2), x.size(3), y.size(2), y.size(3)};
  DDL_DISPATCH_FLOAT(x.dtype(), "upsample2d",
                     [&] { run<scalar_t>(g, p, x.data<scalar_t>(), y.data<scalar_t>(), false); });
}

void upsample2d_backward_cpu(const Tensor& gy, const Tensor& gx, const Upsample2dParams& p) {
  const Geom g{gx.size(0) * gx.size(1), gx.size(2), gx.size(3), gy.size(2), gy.size(3)};
  DDL_DISPATCH_FLOAT(gy.dtype(), "upsample2d_backward",
                     [&] { run<scalar_t>(g, p, gy.data<scalar_t>(), gx.data<scalar_t>(), true); });
}

using kernels::upsample2d_backward_kernel;
using kernels::upsample2d_forward_kernel;
DDL_REGISTER_KERNEL(upsample2d_forward_kernel, CPU, &upsample2d_forward_cpu);
DDL_REGISTER_KERNEL(upsample2d_backward_kernel, CPU, &upsample2d_backward_cpu);

}  // namespace
}  // namespace ddl::cpu
