// CUDA upsample2d (nearest, bilinear with align_corners false or true), forward
// and backward. Source indices and weights come from tensor/kernels/upsample_coords.h,
// the same functions the CPU kernels use, so results match the CPU's bit for bit
// (Note [Explicit fma in upsample2d]). The backward is a gather, not an atomic
// scatter: see Note [Gathered upsample backward].
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/kernels/upsample_coords.h>
#include <ddl/tensor/ops/upsample.h>

namespace ddl::cuda::detail {
namespace {

namespace uc = ddl::upsample_coords;

// x: [planes, H, W], y: [planes, P, Q]; rh, rw: the per-dim ratios the index
// formulas take (uc::scale_value<float> for nearest, uc::bilinear_ratio<T> for bilinear).
template <typename R>
struct ResampleGeom {
  int64_t planes, H, W, P, Q;
  R rh, rw;
  bool align_corners;
};

// The first i in [0, n) where pred(i) holds; pred must be false then true as i grows.
template <typename Pred>
__device__ int64_t first_where(int64_t n, Pred pred) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// Note [Gathered upsample backward]
// The CPU backward scatters: for each output (i, j) in row-major order it adds the
// output's gradient (times a weight, for bilinear) into the inputs it read. An
// atomicAdd scatter would add in a different order each run. Here one thread per
// input (h, w) visits the outputs that read it in that same row-major order and
// adds their terms in the CPU's order (for bilinear: corners (i0, j0), (i0, j1),
// (i1, j0), (i1, j1), a degenerate corner counted as often as the CPU counts it),
// starting from zero as the CPU does: the same additions in the same order, so
// the same bits, and no atomics. The source indices are non-decreasing in the
// output index, so the outputs reading row h are one run of rows found by binary
// search (likewise for columns).

// One thread per output: y = x[nearest row, nearest column].
template <typename T>
__global__ void nearest_forward_kernel(ResampleGeom<float> g, const T* x, T* y) {
  const int64_t total = g.planes * g.P * g.Q;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < total; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = k % g.Q, i = k / g.Q % g.P, pl = k / (g.P * g.Q);
    const int64_t h = uc::nearest_src(i, g.H, g.P, g.rh), w = uc::nearest_src(j, g.W, g.Q, g.rw);
    y[k] = x[(pl * g.H + h) * g.W + w];
  }
}

// One thread per input: the sum of gy over the outputs whose nearest source it is.
template <typename T>
__global__ void nearest_backward_kernel(ResampleGeom<float> g, const T* gy, T* gx) {
  const int64_t total = g.planes * g.H * g.W;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < total; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t w = k % g.W, h = k / g.W % g.H, pl = k / (g.H * g.W);
    const T* yp = gy + pl * g.P * g.Q;
    const int64_t i_begin = first_where(g.P, [&](int64_t i) { return uc::nearest_src(i, g.H, g.P, g.rh) >= h; });
    const int64_t j_begin = first_where(g.Q, [&](int64_t j) { return uc::nearest_src(j, g.W, g.Q, g.rw) >= w; });
    T acc = 0;
    for (int64_t i = i_begin; i < g.P && uc::nearest_src(i, g.H, g.P, g.rh) == h; ++i)
      for (int64_t j = j_begin; j < g.Q && uc::nearest_src(j, g.W, g.Q, g.rw) == w; ++j) acc += yp[i * g.Q + j];
    gx[k] = acc;
  }
}

// One thread per output: the blend of its four source pixels.
template <typename T>
__global__ void bilinear_forward_kernel(ResampleGeom<T> g, const T* x, T* y) {
  const int64_t total = g.planes * g.P * g.Q;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < total; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = k % g.Q, i = k / g.Q % g.P, pl = k / (g.P * g.Q);
    const uc::Lerp<T> r = uc::lerp_at<T>(i, g.H, g.P, g.rh, g.align_corners);
    const uc::Lerp<T> c = uc::lerp_at<T>(j, g.W, g.Q, g.rw, g.align_corners);
    const T* x0 = x + (pl * g.H + r.i0) * g.W;
    const T* x1 = x + (pl * g.H + r.i1) * g.W;
    y[k] = uc::blend(r, c, x0[c.i0], x0[c.i1], x1[c.i0], x1[c.i1]);
  }
}

// One thread per input (h, w); see Note [Gathered upsample backward].
template <typename T>
__global__ void bilinear_backward_kernel(ResampleGeom<T> g, const T* gy, T* gx) {
  const int64_t total = g.planes * g.H * g.W;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < total; k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t w = k % g.W, h = k / g.W % g.H, pl = k / (g.H * g.W);
    const T* yp = gy + pl * g.P * g.Q;
    // Rows reading h have i0 == h or i1 == h: from the first with i1 >= h while i0 <= h.
    const int64_t i_begin =
        first_where(g.P, [&](int64_t i) { return uc::lerp_at<T>(i, g.H, g.P, g.rh, g.align_corners).i1 >= h; });
    const int64_t j_begin =
        first_where(g.Q, [&](int64_t j) { return uc::lerp_at<T>(j, g.W, g.Q, g.rw, g.align_corners).i1 >= w; });
    T acc = 0;
    for (int64_t i = i_begin; i < g.P; ++i) {
      const uc::Lerp<T> r = uc::lerp_at<T>(i, g.H, g.P, g.rh, g.align_corners);
      if (r.i0 > h) break;
      for (int64_t j = j_begin; j < g.Q; ++j) {
        const uc::Lerp<T> c = uc::lerp_at<T>(j, g.W, g.Q, g.rw, g.align_corners);
        if (c.i0 > w) break;
        const T v = yp[i * g.Q + j];
        if (r.i0 == h && c.i0 == w) acc = uc::fused_mul_add(uc::product(r.l0, c.l0), v, acc);
        if (r.i0 == h && c.i1 == w) acc = uc::fused_mul_add(uc::product(r.l0, c.l1), v, acc);
        if (r.i1 == h && c.i0 == w) acc = uc::fused_mul_add(uc::product(r.l1, c.l0), v, acc);
        if (r.i1 == h && c.i1 == w) acc = uc::fused_mul_add(uc::product(r.l1, c.l1), v, acc);
      }
    }
    gx[k] = acc;
  }
}

template <typename T>
void launch(const Upsample2dParams& p, const T* src, T* dst, int64_t planes, int64_t H, int64_t W, int64_t P, int64_t Q,
            bool backward, cudaStream_t s) {
  const int64_t threads = planes * (backward ? H * W : P * Q);
  if (p.mode == InterpolateMode::Nearest) {
    const ResampleGeom<float> g{
        planes, H, W, P, Q, uc::scale_value<float>(p.scales[0], H, P), uc::scale_value<float>(p.scales[1], W, Q),
        false};
    if (backward) {
      nearest_backward_kernel<T><<<blocks_for(threads), kBlockThreads, 0, s>>>(g, src, dst);
    } else {
      nearest_forward_kernel<T><<<blocks_for(threads), kBlockThreads, 0, s>>>(g, src, dst);
    }
  } else {
    const ResampleGeom<T> g{planes,
                            H,
                            W,
                            P,
                            Q,
                            uc::bilinear_ratio<T>(H, P, p.scales[0], p.align_corners),
                            uc::bilinear_ratio<T>(W, Q, p.scales[1], p.align_corners),
                            p.align_corners};
    if (backward) {
      bilinear_backward_kernel<T><<<blocks_for(threads), kBlockThreads, 0, s>>>(g, src, dst);
    } else {
      bilinear_forward_kernel<T><<<blocks_for(threads), kBlockThreads, 0, s>>>(g, src, dst);
    }
  }
  DDL_CUDA_KERNEL_CHECK();
}

// x: [N, C, H, W] -> y: [N, C, P, Q].
void upsample2d_forward_cuda(const Tensor& x, const Tensor& y, const Upsample2dParams& p) {
  DeviceGuard guard(x.device().index);
  const cudaStream_t s = current_stream(x.device().index);
  DDL_DISPATCH_FLOAT(x.dtype(), "upsample2d", [&] {
    launch<scalar_t>(p, x.data<scalar_t>(), y.data<scalar_t>(), x.size(0) * x.size(1), x.size(2), x.size(3), y.size(2),
                     y.size(3), false, s);
  });
}

// gy: [N, C, P, Q] -> gx: [N, C, H, W].
void upsample2d_backward_cuda(const Tensor& gy, const Tensor& gx, const Upsample2dParams& p) {
  DeviceGuard guard(gx.device().index);
  const cudaStream_t s = current_stream(gx.device().index);
  DDL_DISPATCH_FLOAT(gy.dtype(), "upsample2d_backward", [&] {
    launch<scalar_t>(p, gy.data<scalar_t>(), gx.data<scalar_t>(), gx.size(0) * gx.size(1), gx.size(2), gx.size(3),
                     gy.size(2), gy.size(3), true, s);
  });
}

}  // namespace

using kernels::upsample2d_backward_kernel;
using kernels::upsample2d_forward_kernel;
DDL_REGISTER_KERNEL(upsample2d_forward_kernel, CUDA, &upsample2d_forward_cuda);
DDL_REGISTER_KERNEL(upsample2d_backward_kernel, CUDA, &upsample2d_backward_cuda);

}  // namespace ddl::cuda::detail
