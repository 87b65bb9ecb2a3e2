// CUDA softmax / log_softmax (forward, backward) and the NLL loss (forward,
// backward, fused with log_softmax for cross_entropy). The per-element math is
// tensor/kernels/softmax_functors.h, shared with the CPU; row sums run in double in a
// fixed order (Note [Deterministic CUDA reductions]). Bad targets are found on
// the device and raised at the next sync (Note [Deferred device errors]): no host
// round trip per loss call.
#include <cmath>
#include <cstdint>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/block_reduce.h>
#include <ddl/tensor/kernels/softmax_functors.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl::cuda {
namespace {

using detail::kBlockThreads;
namespace sm = ddl::softmax_math;

// Rows along the softmax dim at most this long, or strided ones (inner > 1),
// are handled by one thread each; longer contiguous rows by a block each.
constexpr int64_t kSmallRow = 32;
constexpr unsigned int kMaxBlocks = 1u << 20;

struct Plus {
  template <typename A>
  __device__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct Min {
  template <typename A>
  __device__ A operator()(A a, A b) const {
    return b < a ? b : a;
  }
};
struct RowMax {
  template <typename A>
  __device__ A operator()(A a, A b) const {
    return sm::row_max(a, b);
  }
};

using softmax_math::Dims3;
using softmax_math::split_at;

unsigned int grid_for(int64_t blocks) {
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// ---- softmax forward: x, y [outer, D, inner] ----

// One thread per (o, j) column, walking D with stride inner (coalesced across j), as the CPU does.
template <typename T>
__global__ void softmax_fwd_columns(const T* x, T* y, int64_t outer, int64_t D, int64_t inner, bool log) {
  for (int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; col < outer * inner;
       col += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t base = (col / inner) * D * inner + col % inner;
    const T* xc = x + base;
    T* yc = y + base;
    T mx = -static_cast<T>(INFINITY);
    for (int64_t k = 0; k < D; ++k) mx = sm::row_max(mx, xc[k * inner]);
    double s = 0.0;
    for (int64_t k = 0; k < D; ++k) {
      const T e = std::exp(xc[k * inner] - mx);
      s += e;
      if (!log) yc[k * inner] = e;
    }
    const double nrm = sm::norm(log, s);
    for (int64_t k = 0; k < D; ++k)
      yc[k * inner] = log ? sm::log_softmax_out(xc[k * inner], mx, nrm) : sm::softmax_out(yc[k * inner], nrm);
  }
}

// One block per contiguous row of D (inner == 1).
template <typename T>
__global__ void softmax_fwd_rows(const T* x, T* y, int64_t outer, int64_t D, bool log) {
  __shared__ detail::BlockScratch<double> scratch_d;
  __shared__ detail::BlockScratch<T> scratch_t;
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    const T* xr = x + row * D;
    T* yr = y + row * D;
    T mx = -static_cast<T>(INFINITY);
    for (int64_t k = threadIdx.x; k < D; k += blockDim.x) mx = sm::row_max(mx, xr[k]);
    mx = detail::block_reduce(mx, RowMax{}, scratch_t.get());
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < D; k += blockDim.x) {
      const T e = std::exp(xr[k] - mx);
      s += e;
      if (!log) yr[k] = e;
    }
    s = detail::block_reduce(s, Plus{}, scratch_d.get());
    const double nrm = sm::norm(log, s);
    // Each thread rereads only the elements it wrote above.
    for (int64_t k = threadIdx.x; k < D; k += blockDim.x)
      yr[k] = log ? sm::log_softmax_out(xr[k], mx, nrm) : sm::softmax_out(yr[k], nrm);
  }
}

void softmax_forward_cuda(const Tensor& x, int64_t dim, bool log, Tensor& y) {
  const Dims3 g = split_at(x.shape(), dim);
  if (x.numel() == 0) return;
  detail::DeviceGuard guard(x.device().index);
  cudaStream_t s = detail::current_stream(x.device().index);
  DDL_DISPATCH_FLOAT(x.dtype(), "softmax", [&] {
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = y.data<scalar_t>();
    if (g.inner > 1 || g.d <= kSmallRow) {
      softmax_fwd_columns<<<detail::blocks_for(g.outer * g.inner), kBlockThreads, 0, s>>>(xp, yp, g.outer, g.d, g.inner,
                                                                                          log);
    } else {
      softmax_fwd_rows<<<grid_for(g.outer), kBlockThreads, 0, s>>>(xp, yp, g.outer, g.d, log);
    }
    DDL_CUDA_KERNEL_CHECK();
  });
}

// ---- softmax backward: grad_y, y, grad_x [outer, D, inner] ----

template <typename T>
__global__ void softmax_bwd_columns(const T* gy, const T* y, T* gx, int64_t outer, int64_t D, int64_t inner, bool log) {
  for (int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; col < outer * inner;
       col += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t base = (col / inner) * D * inner + col % inner;
    double s = 0.0;
    for (int64_t k = 0; k < D; ++k) {
      const int64_t i = base + k * inner;
      s += log ? gy[i] : sm::softmax_grad_term(gy[i], y[i]);
    }
    for (int64_t k = 0; k < D; ++k) {
      const int64_t i = base + k * inner;
      gx[i] = log ? sm::log_softmax_grad(gy[i], y[i], s) : sm::softmax_grad(gy[i], y[i], s);
    }
  }
}

template <typename T>
__global__ void softmax_bwd_rows(const T* gy, const T* y, T* gx, int64_t outer, int64_t D, bool log) {
  __shared__ detail::BlockScratch<double> scratch;
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    const int64_t base = row * D;
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < D; k += blockDim.x)
      s += log ? gy[base + k] : sm::softmax_grad_term(gy[base + k], y[base + k]);
    s = detail::block_reduce(s, Plus{}, scratch.get());
    for (int64_t k = threadIdx.x; k < D; k += blockDim.x) {
      const int64_t i = base + k;
      gx[i] = log ? sm::log_softmax_grad(gy[i], y[i], s) : sm::softmax_grad(gy[i], y[i], s);
    }
  }
}

void softmax_backward_cuda(const Tensor& grad_y, const Tensor& y, int64_t dim, bool log, Tensor& grad_x) {
  const Dims3 g = split_at(y.shape(), dim);
  if (y.numel() == 0) return;
  detail::DeviceGuard guard(y.device().index);
  cudaStream_t s = detail::current_stream(y.device().index);
  DDL_DISPATCH_FLOAT(y.dtype(), "softmax_backward", [&] {
    const scalar_t* gp = grad_y.data<scalar_t>();
    const scalar_t* yp = y.data<scalar_t>();
    scalar_t* gxp = grad_x.data<scalar_t>();
    if (g.inner > 1 || g.d <= kSmallRow) {
      softmax_bwd_columns<<<detail::blocks_for(g.outer * g.inner), kBlockThreads, 0, s>>>(gp, yp, gxp, g.outer, g.d,
                                                                                          g.inner, log);
    } else {
      softmax_bwd_rows<<<grid_for(g.outer), kBlockThreads, 0, s>>>(gp, yp, gxp, g.outer, g.d, log);
    }
    DDL_CUDA_KERNEL_CHECK();
  });
}

// ---- nll_loss: log_probs [N, C, S], target [N, S] ----

// One block: *count = number of non-ignored targets; the out-of-range target with
// the lowest flat index (if any) goes to `err`, raised later on the host (see Note
// [Deferred device errors] in tensor/cuda/common.h). No host round trip per call.
__global__ void scan_targets(const int64_t* tp, int64_t n, int64_t S, int64_t C, int64_t ignore_index, int64_t* count,
                             detail::DeviceErrorRecord* err, int op) {
  __shared__ detail::BlockScratch<int64_t> scratch;
  int64_t c = 0, bad = INT64_MAX;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const int64_t t = tp[i];
    if (t == ignore_index) continue;
    ++c;
    if ((t < 0 || t >= C) && i < bad) bad = i;
  }
  c = detail::block_reduce(c, Plus{}, scratch.get());
  bad = detail::block_reduce(bad, Min{}, scratch.get());
  if (threadIdx.x != 0) return;
  *count = c;
  // First error wins until the host raises it (a race between two streams can only mix two bad reports).
  if (err && bad != INT64_MAX && *static_cast<volatile int*>(&err->flag) == 0) {
    err->op = op, err->index = bad, err->value = tp[bad], err->inner = S, err->classes = C;
    __threadfence_system();  // the fields reach host memory before the flag
    *static_cast<volatile int*>(&err->flag) = 1;
  }
}

// Counts the non-ignored targets into a device int64 (undefined when there are none)
// and, when `op` is given, reports the first out-of-range one through the deferred
// error record. Raises an error an earlier call on this GPU left behind.
Tensor scan_targets_async(const Tensor& target, int64_t C, int64_t ignore_index, const char* op, cudaStream_t s) {
  const int device = target.device().index;
  const int64_t N = target.size(0), S = target.size(1), n = N * S;
  if (op) detail::raise_device_errors(device);
  if (n == 0) return Tensor();
  Tensor count = empty(Shape{1}, {DType::Int64, target.device()});
  detail::DeviceErrorRecord* err = op ? detail::device_error_record(device) : nullptr;
  scan_targets<<<1, kBlockThreads, 0, s>>>(target.data<int64_t>(), n, S, C, ignore_index, count.data<int64_t>(), err,
                                           op ? detail::device_error_op_id(op) : 0);
  DDL_CUDA_KERNEL_CHECK();
  return count;
}

// Per-sample losses (0 when ignored), as T into `out` or as double into `per`. An
// out-of-range target gives NaN (never an out-of-bounds read); its error is deferred.
template <typename T, typename Out>
__global__ void nll_samples(const T* lp, const int64_t* tp, int64_t N, int64_t C, int64_t S, int64_t ignore_index,
                            double eps, Out* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < N * S;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t t = tp[i], n = i / S, s = i % S;
    const double l = t == ignore_index   ? 0.0
                     : (t < 0 || t >= C) ? static_cast<double>(NAN)
                                         : nll_math::sample_loss(lp + n * C * S + s, S, C, t, eps);
    out[i] = static_cast<Out>(l);
  }
}

// One block: out[0] = Σ per (Sum), or Σ per / *count (Mean; NaN when the count is 0
// or absent, as on the CPU).
template <typename T>
__global__ void nll_total(const double* per, int64_t n, bool mean, const int64_t* count, T* out) {
  __shared__ detail::BlockScratch<double> scratch;
  double total = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) total += per[i];
  total = detail::block_reduce(total, Plus{}, scratch.get());
  if (threadIdx.x == 0) out[0] = static_cast<T>(mean ? total / static_cast<double>(count ? *count : 0) : total);
}

void nll_loss_forward_cuda(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opts,
                           const char* op, Tensor& loss) {
  const int64_t N = log_probs.size(0), C = log_probs.size(1), S = log_probs.size(2), n = N * S;
  detail::DeviceGuard guard(log_probs.device().index);
  cudaStream_t s = detail::current_stream(log_probs.device().index);
  const Tensor count = scan_targets_async(target, C, opts.ignore_index, op, s);
  DDL_DISPATCH_FLOAT(log_probs.dtype(), op, [&] {
    using T = scalar_t;
    const T* lp = log_probs.data<T>();
    const int64_t* tp = target.data<int64_t>();
    if (opts.reduction == Reduction::None) {
      if (n == 0) return;
      nll_samples<<<detail::blocks_for(n), kBlockThreads, 0, s>>>(lp, tp, N, C, S, opts.ignore_index,
                                                                  opts.label_smoothing, loss.data<T>());
      DDL_CUDA_KERNEL_CHECK();
      return;
    }
    const Tensor per = empty(Shape{n}, {DType::Float64, log_probs.device()});
    if (n > 0) {
      nll_samples<<<detail::blocks_for(n), kBlockThreads, 0, s>>>(lp, tp, N, C, S, opts.ignore_index,
                                                                  opts.label_smoothing, per.data<double>());
      DDL_CUDA_KERNEL_CHECK();
    }
    nll_total<<<1, kBlockThreads, 0, s>>>(per.data<double>(), n, opts.reduction == Reduction::Mean,
                                          count.defined() ? count.data<int64_t>() : nullptr, loss.data<T>());
    DDL_CUDA_KERNEL_CHECK();
  });
}

// grad_input[n, c, s] for every element: 0 when ignored, else the TargetDist gradient
// with g = grad_loss (per sample, or the one scalar) · scale, where scale is
// 1 / *mean_count for Mean (the count stays on the device) and 1 otherwise.
template <typename T>
__global__ void nll_grad(const T* gl, const T* lp, const int64_t* tp, T* gi, int64_t N, int64_t C, int64_t S,
                         int64_t ignore_index, bool per_sample, const int64_t* mean_count, nll_math::TargetDist q,
                         bool through_log_softmax) {
  const double scale = mean_count ? 1.0 / static_cast<double>(*mean_count) : 1.0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < N * C * S;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t n = i / (C * S), c = (i / S) % C, s = i % S;
    const int64_t t = tp[n * S + s];
    if (t == ignore_index) {
      gi[i] = T(0);
      continue;
    }
    const double g = static_cast<double>(per_sample ? gl[n * S + s] : gl[0]) * scale;
    gi[i] = nll_math::loss_grad(g, lp[i], c == t ? q.on : q.off, through_log_softmax);
  }
}

void nll_loss_backward_cuda(const Tensor& grad_loss, const Tensor& log_probs, const Tensor& target,
                            const CrossEntropyOptions& opts, bool through_log_softmax, Tensor& grad_input) {
  const int64_t N = log_probs.size(0), C = log_probs.size(1), S = log_probs.size(2);
  detail::DeviceGuard guard(log_probs.device().index);
  cudaStream_t s = detail::current_stream(log_probs.device().index);
  if (grad_input.numel() == 0) return;
  // The forward of the same graph reported bad targets (deferred); they are not
  // reported twice. Unchecked targets cannot read out of bounds: nll_grad only compares them.
  Tensor count;
  if (opts.reduction == Reduction::Mean) count = scan_targets_async(target, C, opts.ignore_index, nullptr, s);
  const nll_math::TargetDist q(opts.label_smoothing, C);
  DDL_DISPATCH_FLOAT(log_probs.dtype(), "nll_loss_backward", [&] {
    using T = scalar_t;
    nll_grad<<<detail::blocks_for(N * C * S), kBlockThreads, 0, s>>>(
        grad_loss.data<T>(), log_probs.data<T>(), target.data<int64_t>(), grad_input.data<T>(), N, C, S,
        opts.ignore_index, opts.reduction == Reduction::None, count.defined() ? count.data<int64_t>() : nullptr, q,
        through_log_softmax);
    DDL_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::softmax_forward_kernel, CUDA, &softmax_forward_cuda);
DDL_REGISTER_KERNEL(kernels::softmax_backward_kernel, CUDA, &softmax_backward_cuda);
DDL_REGISTER_KERNEL(kernels::nll_loss_forward_kernel, CUDA, &nll_loss_forward_cuda);
DDL_REGISTER_KERNEL(kernels::nll_loss_backward_kernel, CUDA, &nll_loss_backward_cuda);

}  // namespace ddl::cuda
