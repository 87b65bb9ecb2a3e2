// CUDA max and average pooling, forward and backward: our own kernels, not
// cuDNN's. cuDNN pooling returns no argmax indices (the max-pool backward slot
// receives only grad_y and the indices), has no ceil_mode or dilation, and its
// backward wants x and y, which the avg-pool backward slot does not receive.
// Each kernel follows tensor/cpu/pool.cpp's loops and tie rules, so results
// match the CPU's bit for bit, max backward included (see Note [Deterministic
// max-pool backward]). Max pooling also takes float16/bfloat16 directly: it
// compares and adds in float and rounds once, as the CPU's float32 copies do.
#include <cmath>
#include <cub/device/device_radix_sort.cuh>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/half_compute.h>
#include <ddl/tensor/ops/pool.h>

namespace ddl::cuda::detail {
namespace {

struct PoolGeom {
  int64_t planes, H, W, P, Q, kh, kw, sh, sw, ph, pw, dh, dw;
};

PoolGeom make_geom(const Tensor& x, const Tensor& y, const Pool2dParams& p) {
  return {x.size(0) * x.size(1), x.size(2),   x.size(3),    y.size(2),    y.size(3),     p.kernel[0],  p.kernel[1],
          p.stride[0],           p.stride[1], p.padding[0], p.padding[1], p.dilation[0], p.dilation[1]};
}

// x: [planes, H, W] -> y, idx: [planes, P, Q]; idx = h * W + w of the first
// maximum in window order, NaN wins (as PyTorch); one thread per output.
// 16-bit values compare as float, and the maximum leaves as float32 -> T rounds it
// (a NaN's payload included), as the CPU's widened copy does.
template <typename T>
__global__ void max_forward_kernel(PoolGeom g, const T* x, T* y, int64_t* idx) {
  using C = ComputeT<T>;
  const int64_t total = g.planes * g.P * g.Q;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t q = i % g.Q, p = i / g.Q % g.P, pl = i / (g.P * g.Q);
    const T* xp = x + pl * g.H * g.W;
    int64_t h0 = p * g.sh - g.ph, w0 = q * g.sw - g.pw;
    const int64_t h1 = min(h0 + (g.kh - 1) * g.dh + 1, g.H), w1 = min(w0 + (g.kw - 1) * g.dw + 1, g.W);
    while (h0 < 0) h0 += g.dh;
    while (w0 < 0) w0 += g.dw;
    C m = -static_cast<C>(INFINITY);
    int64_t mi = h0 * g.W + w0;
    for (int64_t h = h0; h < h1; h += g.dh) {
      for (int64_t w = w0; w < w1; w += g.dw) {
        const C v = static_cast<C>(xp[h * g.W + w]);
        if (v > m || isnan(v)) m = v, mi = h * g.W + w;
      }
    }
    y[i] = static_cast<T>(m);
    idx[i] = mi;
  }
}

// Note [Deterministic max-pool backward]
// The backward slot receives only grad_y, the argmax indices and grad_x (no window
// geometry: adaptive max pooling shares it), so it cannot gather over windows, and a
// scatter with atomicAdd sums overlapping windows' gradients in a different order from
// run to run. Instead each output gets the key plane * hw + index (the flat grad_x
// position its gradient goes to) and its own position as value; a stable radix sort
// (cub::DeviceRadixSort) groups each input's outputs together in increasing output
// order, and one thread per group sums them in that order into zero. That is the CPU's
// order (tensor/cpu/pool.cpp adds outputs in turn), so the result is the same in every
// run and bit-identical to the CPU. Indices outside the plane get a key past every
// position and are skipped (the forward never makes them). 16-bit gradients add in
// float and round once, as the CPU's float32 copies do.
//
// When the frontend knows that no two windows share an input (Note [Disjoint pooling
// windows] in tensor/ops/pool.cpp: VGG's 2x2/2 pools), each input is at most one output's
// argmax, and a plain scatter of 0 + gy (the sum of one term: -0 becomes +0) writes
// the same bits with no sort.

// keys[i] = (i / pq) * hw + idx[i] (or `none` when idx[i] is outside the plane), values[i] = i.
__global__ void max_backward_keys(int64_t total, int64_t hw, int64_t pq, const int64_t* idx, uint64_t none,
                                  uint64_t* keys, int64_t* values) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = idx[i];
    keys[i] = j >= 0 && j < hw ? static_cast<uint64_t>((i / pq) * hw + j) : none;
    values[i] = i;
  }
}

// keys, order: sorted pairs; the first of each run of equal keys sums gy over its run in
// order and writes gx[key] (zeroed by the caller for inputs that are nobody's argmax).
template <typename T>
__global__ void max_backward_sum_runs(int64_t total, const uint64_t* keys, const int64_t* order, uint64_t none,
                                      const T* gy, T* gx) {
  using C = ComputeT<T>;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < total; k += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t key = keys[k];
    if (key == none || (k > 0 && keys[k - 1] == key)) continue;
    C acc = C(0);
    for (int64_t j = k; j < total && keys[j] == key; ++j) acc += static_cast<C>(gy[order[j]]);
    gx[key] = static_cast<T>(acc);
  }
}

// gy, idx: [planes, pq] -> gx: [planes, hw] (zeroed by the caller), when no two outputs
// of a plane share an index: each writes its own input, so the order cannot matter.
template <typename T>
__global__ void max_backward_scatter(int64_t total, int64_t hw, int64_t pq, const int64_t* idx, const T* gy, T* gx) {
  using C = ComputeT<T>;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = idx[i];
    if (j < 0 || j >= hw) continue;  // skipped, as the sorted path skips it
    gx[(i / pq) * hw + j] = static_cast<T>(C(0) + static_cast<C>(gy[i]));
  }
}

// The window of output (p, q) clipped to the input, and PyTorch's divisor (as the CPU's avg_window).
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

__device__ AvgWindow avg_window(const PoolGeom& g, bool include_pad, int64_t p, int64_t q) {
  int64_t h0 = p * g.sh - g.ph, w0 = q * g.sw - g.pw;
  int64_t h1 = min(h0 + g.kh, g.H + g.ph), w1 = min(w0 + g.kw, g.W + g.pw);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = max(h0, int64_t(0)), w0 = max(w0, int64_t(0));
  h1 = min(h1, g.H), w1 = min(w1, g.W);
  return {h0, h1, w0, w1, include_pad ? padded : (h1 - h0) * (w1 - w0)};
}

// x: [planes, H, W] -> y: [planes, P, Q]; one thread per output.
template <typename T>
__global__ void avg_forward_kernel(PoolGeom g, bool include_pad, const T* x, T* y) {
  const int64_t total = g.planes * g.P * g.Q;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t q = i % g.Q, p = i / g.Q % g.P, pl = i / (g.P * g.Q);
    const T* xp = x + pl * g.H * g.W;
    const AvgWindow a = avg_window(g, include_pad, p, q);
    T s = 0;
    for (int64_t h = a.h0; h < a.h1; ++h)
      for (int64_t w = a.w0; w < a.w1; ++w) s += xp[h * g.W + w];
    y[i] = a.divisor > 0 ? s / T(a.divisor) : T(0);
  }
}

// gy: [planes, P, Q] -> gx: [planes, H, W]; one thread per input gathers
// gy / divisor from every window holding it, in (p, q) order as the CPU adds.
template <typename T>
__global__ void avg_backward_kernel(PoolGeom g, bool include_pad, const T* gy, T* gx) {
  const int64_t total = g.planes * g.H * g.W;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t w = i % g.W, h = i / g.W % g.H, pl = i / (g.H * g.W);
    const T* yp = gy + pl * g.P * g.Q;
    // Windows [p sh - ph, p sh - ph + kh) holding h: p in [p_lo, p_hi].
    const int64_t p_lo = h + g.ph < g.kh ? 0 : (h + g.ph - g.kh) / g.sh + 1;
    const int64_t p_hi = min((h + g.ph) / g.sh, g.P - 1);
    const int64_t q_lo = w + g.pw < g.kw ? 0 : (w + g.pw - g.kw) / g.sw + 1;
    const int64_t q_hi = min((w + g.pw) / g.sw, g.Q - 1);
    T acc = 0;
    for (int64_t p = p_lo; p <= p_hi; ++p) {
      for (int64_t q = q_lo; q <= q_hi; ++q) {
        const AvgWindow a = avg_window(g, include_pad, p, q);
        if (a.divisor <= 0 || h < a.h0 || h >= a.h1 || w < a.w0 || w >= a.w1) continue;
        acc += yp[p * g.Q + q] / T(a.divisor);
      }
    }
    gx[i] = acc;
  }
}

void max_pool2d_forward_cuda(const Tensor& x, const Tensor& y, const Tensor& idx, const Pool2dParams& p) {
  DeviceGuard guard(x.device().index);
  const cudaStream_t s = current_stream(x.device().index);
  const PoolGeom g = make_geom(x, y, p);
  dispatch_float_and_half(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    max_forward_kernel<T>
        <<<blocks_for(y.numel()), kBlockThreads, 0, s>>>(g, x.data<T>(), y.data<T>(), idx.data<int64_t>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

// See Note [Deterministic max-pool backward].
void max_pool2d_backward_cuda(const Tensor& gy, const Tensor& idx, const Tensor& gx, bool disjoint) {
  const int device = gx.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  DDL_CUDA_CHECK(cudaMemsetAsync(gx.raw_data(), 0, gx.nbytes(), s));
  if (gy.numel() == 0) return;
  const int64_t hw = gx.size(2) * gx.size(3), pq = gy.size(2) * gy.size(3), total = gy.numel();
  if (disjoint) {
    dispatch_float_and_half(gy.dtype(), "max_pool2d_backward", [&](auto tag) {
      using T = decltype(tag);
      max_backward_scatter<T>
          <<<blocks_for(total), kBlockThreads, 0, s>>>(total, hw, pq, idx.data<int64_t>(), gy.data<T>(), gx.data<T>());
    });
    DDL_CUDA_KERNEL_CHECK();
    return;
  }
  const uint64_t none = static_cast<uint64_t>(gx.numel());  // past every grad_x position
  int end_bit = 1;
  while (end_bit < 64 && (none >> end_bit) != 0) ++end_bit;  // the sort only needs the key's bits
  const TensorOptions i64(DType::Int64, gx.device());
  const Tensor keys_in = empty({total}, i64), keys_out = empty({total}, i64);
  const Tensor values_in = empty({total}, i64), values_out = empty({total}, i64);
  auto* kin = static_cast<uint64_t*>(keys_in.raw_data());
  auto* kout = static_cast<uint64_t*>(keys_out.raw_data());
  auto* vin = values_in.data<int64_t>();
  auto* vout = values_out.data<int64_t>();
  max_backward_keys<<<blocks_for(total), kBlockThreads, 0, s>>>(total, hw, pq, idx.data<int64_t>(), none, kin, vin);
  DDL_CUDA_KERNEL_CHECK();
  size_t scratch_bytes = 0;
  DDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratch_bytes, kin, kout, vin, vout, total, 0, end_bit, s));
  const Tensor scratch =
      empty({static_cast<int64_t>(scratch_bytes > 0 ? scratch_bytes : 1)}, TensorOptions(DType::UInt8, gx.device()));
  DDL_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(scratch.raw_data(), scratch_bytes, kin, kout, vin, vout, total, 0, end_bit, s));
  dispatch_float_and_half(gy.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    max_backward_sum_runs<T>
        <<<blocks_for(total), kBlockThreads, 0, s>>>(total, kout, vout, none, gy.data<T>(), gx.data<T>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

void avg_pool2d_forward_cuda(const Tensor& x, const Tensor& y, const Pool2dParams& p) {
  DeviceGuard guard(x.device().index);
  const cudaStream_t s = current_stream(x.device().index);
  const PoolGeom g = make_geom(x, y, p);
  DDL_DISPATCH_FLOAT(x.dtype(), "avg_pool2d", [&] {
    avg_forward_kernel<scalar_t><<<blocks_for(y.numel()), kBlockThreads, 0, s>>>(
        g, p.count_include_pad, x.data<scalar_t>(), y.data<scalar_t>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

void avg_pool2d_backward_cuda(const Tensor& gy, const Tensor& gx, const Pool2dParams& p) {
  DeviceGuard guard(gx.device().index);
  const cudaStream_t s = current_stream(gx.device().index);
  const PoolGeom g = make_geom(gx, gy, p);
  DDL_DISPATCH_FLOAT(gy.dtype(), "avg_pool2d_backward", [&] {
    avg_backward_kernel<scalar_t><<<blocks_for(gx.numel()), kBlockThreads, 0, s>>>(
        g, p.count_include_pad, gy.data<scalar_t>(), gx.data<scalar_t>());
  });
  DDL_CUDA_KERNEL_CHECK();
}

}  // namespace

using kernels::avg_pool2d_backward_kernel;
using kernels::avg_pool2d_forward_kernel;
using kernels::max_pool2d_backward_kernel;
using kernels::max_pool2d_forward_kernel;
DDL_REGISTER_KERNEL(max_pool2d_forward_kernel, CUDA, &max_pool2d_forward_cuda);
DDL_REGISTER_KERNEL(max_pool2d_backward_kernel, CUDA, &max_pool2d_backward_cuda);
DDL_REGISTER_KERNEL(avg_pool2d_forward_kernel, CUDA, &avg_pool2d_forward_cuda);
DDL_REGISTER_KERNEL(avg_pool2d_backward_kernel, CUDA, &avg_pool2d_backward_cuda);

}  // namespace ddl::cuda::detail
