// CPU upsample2d kernels (nearest, bilinear), parallel over the N*C planes;
// each plane is written by one thread in a fixed order, so results (the
// backward's sums included) never depend on the thread count. The index and
// weight formulas are PyTorch 1.13's, shared with the CUDA kernels
// (tensor/kernels/upsample_coords.h; see Note [Explicit fma in upsample2d] there).
#include <algorithm>
#include <cmath>
#include <vector>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/kernels/upsample_coords.h>
#include <ddl/tensor/ops/upsample.h>

namespace ddl::cpu {
namespace {

namespace uc = upsample_coords;

template <typename T>
std::vector<uc::Lerp<T>> lerp_table(int64_t in, int64_t out, double scale, bool align_corners) {
  std::vector<uc::Lerp<T>> t(static_cast<size_t>(out));
  const T ratio = uc::bilinear_ratio<T>(in, out, scale, align_corners);
  for (int64_t i = 0; i < out; ++i) t[i] = uc::lerp_at<T>(i, in, out, ratio, align_corners);
  return t;
}

struct UpsampleGeom {
  int64_t planes, H, W, P, Q;
  int64_t grain() const { return ddl::detail::grain_for(16384, P * Q); }
};

// x: [planes, H, W] -> y: [planes, P, Q] (forward), or the adjoint gy -> gx.
template <typename T>
void run(const UpsampleGeom& g, const Upsample2dParams& p, const T* src, T* dst, bool backward) {
  if (p.mode == InterpolateMode::Nearest) {
    std::vector<int64_t> rows(g.P), cols(g.Q);
    const float sh = uc::scale_value<float>(p.scales[0], g.H, g.P), sw = uc::scale_value<float>(p.scales[1], g.W, g.Q);
    for (int64_t i = 0; i < g.P; ++i) rows[i] = uc::nearest_src(i, g.H, g.P, sh);
    for (int64_t j = 0; j < g.Q; ++j) cols[j] = uc::nearest_src(j, g.W, g.Q, sw);
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
          const uc::Lerp<T>& r = rt[i];
          const T* x0 = xp + r.i0 * g.W;
          const T* x1 = xp + r.i1 * g.W;
          for (int64_t j = 0; j < g.Q; ++j) {
            const uc::Lerp<T>& c = ct[j];
            yp[i * g.Q + j] = uc::blend(r, c, x0[c.i0], x0[c.i1], x1[c.i0], x1[c.i1]);
          }
        }
      } else {
        const T* gy = src + pl * g.P * g.Q;
        T* gx = dst + pl * g.H * g.W;
        std::fill(gx, gx + g.H * g.W, T(0));
        for (int64_t i = 0; i < g.P; ++i) {
          const uc::Lerp<T>& r = rt[i];
          for (int64_t j = 0; j < g.Q; ++j) {
            const uc::Lerp<T>& c = ct[j];
            const T v = gy[i * g.Q + j];
            // In this order; tensor/cuda/upsample.cu gathers in the same one.
            T& g00 = gx[r.i0 * g.W + c.i0];
            g00 = uc::fused_mul_add(r.l0 * c.l0, v, g00);
            T& g01 = gx[r.i0 * g.W + c.i1];
            g01 = uc::fused_mul_add(r.l0 * c.l1, v, g01);
            T& g10 = gx[r.i1 * g.W + c.i0];
            g10 = uc::fused_mul_add(r.l1 * c.l0, v, g10);
            T& g11 = gx[r.i1 * g.W + c.i1];
            g11 = uc::fused_mul_add(r.l1 * c.l1, v, g11);
          }
        }
      }
    }
  });
}

void upsample2d_forward_cpu(const Tensor& x, const Tensor& y, const Upsample2dParams& p) {
  const UpsampleGeom g{x.size(0) * x.size(1), x.size(2), x.size(3), y.size(2), y.size(3)};
  DDL_DISPATCH_FLOAT(x.dtype(), "upsample2d",
                     [&] { run<scalar_t>(g, p, x.data<scalar_t>(), y.data<scalar_t>(), false); });
}

void upsample2d_backward_cpu(const Tensor& gy, const Tensor& gx, const Upsample2dParams& p) {
  const UpsampleGeom g{gx.size(0) * gx.size(1), gx.size(2), gx.size(3), gy.size(2), gy.size(3)};
  DDL_DISPATCH_FLOAT(gy.dtype(), "upsample2d_backward",
                     [&] { run<scalar_t>(g, p, gy.data<scalar_t>(), gx.data<scalar_t>(), true); });
}

using kernels::upsample2d_backward_kernel;
using kernels::upsample2d_forward_kernel;
DDL_REGISTER_KERNEL(upsample2d_forward_kernel, CPU, &upsample2d_forward_cpu);
DDL_REGISTER_KERNEL(upsample2d_backward_kernel, CPU, &upsample2d_backward_cpu);

}  // namespace
}  // namespace ddl::cpu
