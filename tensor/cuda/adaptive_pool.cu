// CUDA adaptive average and max pooling (forward) and adaptive average pooling's
// backward. Each kernel follows tensor/cpu/adaptive_pool.cpp's loops (windows of
// tensor/ops/adaptive_pool.h, the same summation order, the same tie and NaN rules),
// so results match the CPU's bit for bit. Adaptive max pooling's backward is
// max_pool2d_backward on the saved indices (tensor/cuda/pool.cu), not here.
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/ops/adaptive_pool.h>

namespace ddl::cuda::detail {
namespace {

// x: [planes, H, W], y: [planes, P, Q].
struct AdaptiveGeom {
  int64_t planes, H, W, P, Q;
};

AdaptiveGeom make_geom(const Tensor& x, const Tensor& y) {
  return {x.size(0) * x.size(1), x.size(2), x.size(3), y.size(2), y.size(3)};
}

// One thread per output: the mean of its window, summed row by row as the CPU does.
template <typename T>
__global__ void avg_forward_kernel(AdaptiveGeom g, const T* x, T* y) {
  const int64_t total = g.planes * g.P * g.Q;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t q = i % g.Q, p = i / g.Q % g.P, pl = i / (g.P * g.Q);
    const T* xp = x + pl * g.H * g.W;
    const int64_t h0 = adaptive_start(p, g.H, g.P), h1 = adaptive_end(p, g.H, g.P);
    const int64_t w0 = adaptive_start(q, g.W, g.Q), w1 = adaptive_end(q, g.W, g.Q);
    T acc = 0;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) acc += xp[h * g.W + w];
    y[i] = acc / T((h1 - h0) * (w1 - w0));
  }
}

// The output cells whose windows along a dim (extent `in` -> `out`) hold index h:
// start(p) <= h  <=>  p <= ((h + 1) out - 1) / in, and end(p) > h  <=>  p >= h out / in.
__device__ int64_t first_cell_holding(int64_t h, int64_t in, int64_t out) { return h * out / in; }
__device__ int64_t last_cell_holding(int64_t h, int64_t in, int64_t out) {
  return min(((h + 1) * out - 1) / in, out - 1);
}

// gy: [planes, P, Q] -> gx: [planes, H, W]. One thread per input gathers
// gy / window size from every window holding it, in (p, q) order: the order in
// which the CPU's scatter adds them into zero, so the sums are the same.
template <typename T>
__global__ void avg_backward_kernel(AdaptiveGeom g, const T* gy, T* gx) {
  const int64_t total = g.planes * g.H * g.W;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t w = i % g.W, h = i / g.W % g.H, pl = i / (g.H * g.W);
    const T* yp = gy + pl * g.P * g.Q;
    const int64_t p_lo = first_cell_holding(h, g.H, g.P), p_hi = last_cell_holding(h, g.H, g.P);
    const int64_t q_lo = first_cell_holding(w, g.W, g.Q), q_hi = last_cell_holding(w, g.W, g.Q);
    T acc = 0;
    for (int64_t p = p_lo; p <= p_hi; ++p) {
      const int64_t h0 = adaptive_start(p, g.H, g.P), h1 = adaptive_end(p, g.H, g.P);
      if (h < h0 || h >= h1) continue;  // never taken; guards the range formulas above
      for (int64_t q = q_lo; q <= q_hi; ++q) {
        const int64_t w0 = adaptive_start(q, g.W, g.Q), w1 = adaptive_end(q, g.W, g.Q);
        if (w < w0 || w >= w1) continue;
        acc += yp[p * g.Q + q] / T((h1 - h0) * (w1 - w0));
      }
    }
    gx[i] = acc;
  }
}

// One thread per output: the first maximum of its window in row-major order, a
// NaN beating everything (the last NaN wins, as the CPU's loop); idx = h * W + w.
template <typename T>
__global__ void max_forward_kernel(AdaptiveGeom g, const T* x, T* y, int64_t* idx) {
  const int64_t total = g.planes * g.P * g.Q;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t q = i % g.Q, p = i / g.Q % g.P, pl = i / (g.P * g.Q);
    const T* xp = x + pl * g.H * g.W;
    const int64_t h0 = adaptive_start(p, g.H, g.P), h1 = adaptive_end(p, g.H, g.P);
    const int64_t w0 = adaptive_start(q, g.W, g.Q), w1 = adaptive_end(q, g.W, g.Q);
    T best = -static_cast<T>(INFINITY);
    int64_t at = h0 * g.W + w0;
    for (int64_t h = h0; h < h1; ++h) {
      for (int64_t w = w0; w < w1; ++w) {
        const T v = xp[h * g.W + w];
        if (v > best || isnan(v)) best = v, at = h * g.W + w;
      }
    }
    y[i] = best;
    idx[i] = at;
  }
}

void adaptive_avg_forward_cuda(const Tensor& x, const Tensor& y) {
  DeviceGuard guard(x.device().index);
  const cudaStream_t s = current_stream(x.device().index);
  const AdaptiveGeom g = make_geom(x, y);
  DDL_DISPATCH_FLOAT(x.dtype(), "adaptive_avg_pool2d", [&] {
    avg_forward_kernel<scalar_t>
        <<<blocks_for(y.numel()), kBlockThreads, 0, s>>>(g, x.data<scalar_t>(), y.data<scalar_t>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

void adaptive_avg_backward_cuda(const Tensor& gy, const Tensor& gx) {
  DeviceGuard guard(gx.device().index);
  const cudaStream_t s = current_stream(gx.device().index);
  const AdaptiveGeom g = make_geom(gx, gy);
  DDL_DISPATCH_FLOAT(gy.dtype(), "adaptive_avg_pool2d_backward", [&] {
    avg_backward_kernel<scalar_t>
        <<<blocks_for(gx.numel()), kBlockThreads, 0, s>>>(g, gy.data<scalar_t>(), gx.data<scalar_t>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

void adaptive_max_forward_cuda(const Tensor& x, const Tensor& y, const Tensor& idx) {
  DeviceGuard guard(x.device().index);
  const cudaStream_t s = current_stream(x.device().index);
  const AdaptiveGeom g = make_geom(x, y);
  DDL_DISPATCH_FLOAT(x.dtype(), "adaptive_max_pool2d", [&] {
    max_forward_kernel<scalar_t><<<blocks_for(y.numel()), kBlockThreads, 0, s>>>(
        g, x.data<scalar_t>(), y.data<scalar_t>(), idx.data<int64_t>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

}  // namespace

using kernels::adaptive_avg_pool2d_backward_kernel;
using kernels::adaptive_avg_pool2d_forward_kernel;
using kernels::adaptive_max_pool2d_forward_kernel;
DDL_REGISTER_KERNEL(adaptive_avg_pool2d_forward_kernel, CUDA, &adaptive_avg_forward_cuda);
DDL_REGISTER_KERNEL(adaptive_avg_pool2d_backward_kernel, CUDA, &adaptive_avg_backward_cuda);
DDL_REGISTER_KERNEL(adaptive_max_pool2d_forward_kernel, CUDA, &adaptive_max_forward_cuda);

}  // namespace ddl::cuda::detail
