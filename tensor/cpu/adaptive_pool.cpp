// CPU adaptive pooling kernels, parallel over the N*C planes; each plane is
// written by one thread in a fixed order, so results never depend on the
// thread count. Windows as in tensor/ops/adaptive_pool.h.
#include <algorithm>
#include <cmath>
#include <limits>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/ops/adaptive_pool.h>

namespace ddl::cpu {
namespace {

struct Planes {
  int64_t planes, H, W, P, Q;
  int64_t grain() const { return ddl::detail::grain_for(16384, H * W); }
};

Planes make_planes(const Shape& xs, const Shape& ys) { return {xs[0] * xs[1], xs[2], xs[3], ys[2], ys[3]}; }

// x: [planes, H, W] -> y: [planes, P, Q], the mean of each window.
template <typename T>
void avg_forward(const Planes& g, const T* x, T* y) {
  parallel_for(0, g.planes, g.grain(), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* xp = x + pl * g.H * g.W;
      T* yp = y + pl * g.P * g.Q;
      for (int64_t p = 0; p < g.P; ++p) {
        const int64_t h0 = adaptive_start(p, g.H, g.P), h1 = adaptive_end(p, g.H, g.P);
        for (int64_t q = 0; q < g.Q; ++q) {
          const int64_t w0 = adaptive_start(q, g.W, g.Q), w1 = adaptive_end(q, g.W, g.Q);
          T acc = 0;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) acc += xp[h * g.W + w];
          yp[p * g.Q + q] = acc / T((h1 - h0) * (w1 - w0));
        }
      }
    }
  });
}

// gy: [planes, P, Q] -> gx: [planes, H, W], each gradient spread evenly over its window.
template <typename T>
void avg_backward(const Planes& g, const T* gy, T* gx) {
  parallel_for(0, g.planes, g.grain(), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      T* gp = gx + pl * g.H * g.W;
      const T* yp = gy + pl * g.P * g.Q;
      std::fill(gp, gp + g.H * g.W, T(0));
      for (int64_t p = 0; p < g.P; ++p) {
        const int64_t h0 = adaptive_start(p, g.H, g.P), h1 = adaptive_end(p, g.H, g.P);
        for (int64_t q = 0; q < g.Q; ++q) {
          const int64_t w0 = adaptive_start(q, g.W, g.Q), w1 = adaptive_end(q, g.W, g.Q);
          const T share = yp[p * g.Q + q] / T((h1 - h0) * (w1 - w0));
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) gp[h * g.W + w] += share;
        }
      }
    }
  });
}

// x: [planes, H, W] -> y, idx: [planes, P, Q]; first maximum wins, a NaN beats
// everything (the last NaN, as PyTorch's loop).
template <typename T>
void max_forward(const Planes& g, const T* x, T* y, int64_t* idx) {
  parallel_for(0, g.planes, g.grain(), [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) {
      const T* xp = x + pl * g.H * g.W;
      for (int64_t p = 0; p < g.P; ++p) {
        const int64_t h0 = adaptive_start(p, g.H, g.P), h1 = adaptive_end(p, g.H, g.P);
        for (int64_t q = 0; q < g.Q; ++q) {
          const int64_t w0 = adaptive_start(q, g.W, g.Q), w1 = adaptive_end(q, g.W, g.Q);
          T best = -std::numeric_limits<T>::infinity();
          int64_t at = h0 * g.W + w0;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) {
              const T v = xp[h * g.W + w];
              if (v > best || std::isnan(v)) {
                best = v;
                at = h * g.W + w;
              }
            }
          y[pl * g.P * g.Q + p * g.Q + q] = best;
          idx[pl * g.P * g.Q + p * g.Q + q] = at;
        }
      }
    }
  });
}

void adaptive_avg_forward_cpu(const Tensor& x, const Tensor& y) {
  const Planes g = make_planes(x.shape(), y.shape());
  DDL_DISPATCH_FLOAT(x.dtype(), "adaptive_avg_pool2d",
                     [&] { avg_forward<scalar_t>(g, x.data<scalar_t>(), y.data<scalar_t>()); });
}

void adaptive_avg_backward_cpu(const Tensor& gy, const Tensor& gx) {
  const Planes g = make_planes(gx.shape(), gy.shape());
  DDL_DISPATCH_FLOAT(gy.dtype(), "adaptive_avg_pool2d_backward",
                     [&] { avg_backward<scalar_t>(g, gy.data<scalar_t>(), gx.data<scalar_t>()); });
}

void adaptive_max_forward_cpu(const Tensor& x, const Tensor& y, const Tensor& idx) {
  const Planes g = make_planes(x.shape(), y.shape());
  DDL_DISPATCH_FLOAT(x.dtype(), "adaptive_max_pool2d",
                     [&] { max_forward<scalar_t>(g, x.data<scalar_t>(), y.data<scalar_t>(), idx.data<int64_t>()); });
}

using kernels::adaptive_avg_pool2d_backward_kernel;
using kernels::adaptive_avg_pool2d_forward_kernel;
using kernels::adaptive_max_pool2d_forward_kernel;
DDL_REGISTER_KERNEL(adaptive_avg_pool2d_forward_kernel, CPU, &adaptive_avg_forward_cpu);
DDL_REGISTER_KERNEL(adaptive_avg_pool2d_backward_kernel, CPU, &adaptive_avg_backward_cpu);
DDL_REGISTER_KERNEL(adaptive_max_pool2d_forward_kernel, CPU, &adaptive_max_forward_cpu);

}  // namespace
}  // namespace ddl::cpu
