// CUDA batch_norm kernels. cuDNN (spatial mode, x viewed as [N, C, S, 1])
// does the training forward, the eval forward and the training input
// gradient. Its saved statistics are exactly the slot's: the batch mean and
// 1 / sqrt(biased var + eps). Small kernels of our own cover what cuDNN does
// not: eval-mode save_mean/save_invstd, eval-mode gradients, weight/bias
// gradients without an input gradient, ones/zeros for a missing affine, and
// all of float16/bfloat16 (Note [16-bit batch norm on CUDA]).
#include <algorithm>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/block_reduce.h>
#include <ddl/tensor/cuda/channel_sums.h>
#include <ddl/tensor/cuda/dnn.h>
#include <ddl/tensor/ops/norm.h>

namespace ddl::cuda::detail {
namespace {

template <typename T>
__global__ void fill_kernel(T* p, int64_t n, T v) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

// Eval mode: the statistics used are the running ones. rm, rv, sm, si: [C]
template <typename T>
__global__ void eval_stats_kernel(const T* rm, const T* rv, double eps, T* sm, T* si, int64_t C) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < C; c += int64_t(gridDim.x) * blockDim.x) {
    sm[c] = rm[c];
    si[c] = static_cast<T>(1.0 / sqrt(static_cast<double>(rv[c]) + eps));
  }
}

// Σ dy and Σ dy (x − mean[c]), each element read as double.
// dy, x: [N, C, S] of T; mean: [C] of P
template <typename T, typename P>
struct GradLoad {
  const T *dy, *x;
  const P* mean;
  __device__ double center(int64_t c) const { return mean[c]; }
  __device__ Acc2 operator()(int64_t i, double m) const {
    const double g = dy[i];
    return {g, g * (static_cast<double>(x[i]) - m)};
  }
};

// gw[c] = invstd[c] Σ dy (x − mean[c]), gb[c] = Σ dy (gw or gb may be null).
template <typename P>
struct GradFinish {
  const P* invstd;
  P *gw, *gb;
  __device__ void operator()(int64_t c, Acc2 t) const {
    if (gw) gw[c] = static_cast<P>(t.b * static_cast<double>(invstd[c]));
    if (gb) gb[c] = static_cast<P>(t.a);
  }
};

// dw and db of batch norm (see GradFinish), deterministic. dy, x: [N, C, S]; N S > 0
template <typename T, typename P>
void channel_grads(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& invstd, const Tensor& gw,
                   const Tensor& gb, cudaStream_t s) {
  const int64_t N = x.size(0), C = x.size(1), S = x.size(2);
  const ChunkPlan plan = plan_chunks(N, C, S);
  const Tensor scratch = partials_scratch(C, plan, x.device());
  channel_sums(
      GradLoad<T, P>{dy.data<T>(), x.data<T>(), mean.data<P>()},
      GradFinish<P>{invstd.data<P>(), gw.defined() ? gw.data<P>() : nullptr, gb.defined() ? gb.data<P>() : nullptr}, N,
      C, S, plan, static_cast<Acc2*>(scratch.raw_data()), s);
}

// Eval mode (statistics are constants): dx = w invstd dy, computed in P.
// dy, dx: [N, C, S] of T; w (or null), invstd: [C] of P
template <typename T, typename P>
__global__ void eval_grad_input_kernel(const T* dy, const P* w, const P* invstd, T* dx, int64_t total, int64_t C,
                                       int64_t S, ChannelWalk walk) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int64_t s = first % S, c = (first / S) % C;
  for (int64_t i = first; i < total; i += walk.stride, walk.step(s, c, S, C)) {
    dx[i] = static_cast<T>((w ? w[c] : P(1)) * invstd[c] * static_cast<P>(dy[i]));
  }
}

// A [C] tensor of `value` on x's device, for a missing weight or bias.
Tensor filled(const Tensor& like, int64_t C, double value, cudaStream_t s) {
  Tensor t = empty({C}, TensorOptions(like.dtype(), like.device()));
  DDL_DISPATCH_FLOAT(like.dtype(), "batch_norm", [&] {
    fill_kernel<scalar_t><<<blocks_for(C), kBlockThreads, 0, s>>>(t.data<scalar_t>(), C, static_cast<scalar_t>(value));
  });
  DDL_CUDA_KERNEL_CHECK();
  return t;
}

// Note [16-bit batch norm on CUDA]
// cuDNN's legacy batch-norm calls (cudnn_ops.h, cuDNN 9) document only that
// the parameter descriptor is "(typeOf(x) == double) ? double : float"; they
// name no bfloat16 data. So float16 and bfloat16 inputs take the kernels below
// rather than cuDNN: they read 16-bit x and dy, compute in float (per-channel
// sums in double, Note [Chunked channel sums]), and store y and dx in
// the 16-bit type once. weight, bias, running and saved statistics are float32,
// as PyTorch keeps them for 16-bit inputs; the results match the CPU's (a
// float32 kernel on a widened x) up to summation order.

// Pass 1 of the training statistics: Σ x. x: [N, C, S]
template <typename T>
struct SumLoad {
  const T* x;
  __device__ double center(int64_t) const { return 0.0; }
  __device__ Acc2 operator()(int64_t i, double) const { return {static_cast<float>(x[i]), 0.0}; }
};

// mean[c] = Σ x / M in double, for pass 2. mean: [C]
struct MeanFinish {
  double* mean;
  double m;
  __device__ void operator()(int64_t c, Acc2 t) const { mean[c] = t.a / m; }
};

// Pass 2: Σ (x − mean)², the mean in double (two passes, as the CPU).
template <typename T>
struct SquaresLoad {
  const T* x;
  const double* mean;
  __device__ double center(int64_t c) const { return mean[c]; }
  __device__ Acc2 operator()(int64_t i, double m) const {
    const double d = static_cast<float>(x[i]) - m;
    return {d * d, 0.0};
  }
};

// save_* and the running update (unbiased variance, as PyTorch) from the
// mean and Σ (x − mean)². mean: [C] double; sm, si: [C]; rm, rv: [C] or null
struct StatsFinish {
  const double* mean;
  double m, momentum, eps;
  float *sm, *si, *rm, *rv;
  __device__ void operator()(int64_t c, Acc2 t) const {
    const double mu = mean[c], m2 = t.a;
    sm[c] = static_cast<float>(mu);
    si[c] = static_cast<float>(1.0 / sqrt(m2 / m + eps));
    if (rm) {
      rm[c] = static_cast<float>((1.0 - momentum) * rm[c] + momentum * mu);
      rv[c] = static_cast<float>((1.0 - momentum) * rv[c] + momentum * m2 / (m - 1.0));
    }
  }
};

// Training statistics of x: [N, C, S] in two chunked passes (Note [Chunked
// channel sums]). N S > 1 (the front end checks it).
template <typename T>
void half_batch_stats(const Tensor& x, double momentum, double eps, Tensor& save_mean, Tensor& save_invstd, float* rm,
                      float* rv, cudaStream_t s) {
  const int64_t N = x.size(0), C = x.size(1), S = x.size(2);
  const double m = static_cast<double>(N * S);
  const ChunkPlan plan = plan_chunks(N, C, S);
  const Tensor scratch = partials_scratch(C, plan, x.device());
  const Tensor mean = empty({C}, TensorOptions(DType::Float64, x.device()));
  Acc2* partial = static_cast<Acc2*>(scratch.raw_data());
  channel_sums(SumLoad<T>{x.data<T>()}, MeanFinish{mean.data<double>(), m}, N, C, S, plan, partial, s);
  channel_sums(
      SquaresLoad<T>{x.data<T>(), mean.data<double>()},
      StatsFinish{mean.data<double>(), m, momentum, eps, save_mean.data<float>(), save_invstd.data<float>(), rm, rv}, N,
      C, S, plan, partial, s);
}

// y = (x − mean) (w invstd) + b in float, rounded to T once.
// x, y: [N, C, S]; w, b (or null), mean, invstd: [C]
template <typename T>
__global__ void half_normalize_kernel(const T* x, const float* w, const float* b, const float* mean,
                                      const float* invstd, T* y, int64_t total, int64_t C, int64_t S,
                                      ChannelWalk walk) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int64_t s = first % S, c = (first / S) % C;
  for (int64_t i = first; i < total; i += walk.stride, walk.step(s, c, S, C)) {
    const float scale = (w ? w[c] : 1.0f) * invstd[c];
    y[i] = static_cast<T>((static_cast<float>(x[i]) - mean[c]) * scale + (b ? b[c] : 0.0f));
  }
}

// Training input gradient, x̂ = (x − mean) invstd:
// dx = w invstd (dy − Σdy / M − x̂ Σ(dy x̂) / M), with sdyx = Σ(dy x̂) and sdy = Σ dy
// from channel_grads. dy, x, dx: [N, C, S]; w (or null), the rest: [C]
template <typename T>
__global__ void half_train_grad_input_kernel(const T* dy, const T* x, const float* w, const float* mean,
                                             const float* invstd, const float* sdyx, const float* sdy, T* dx,
                                             int64_t total, int64_t C, int64_t S, float inv_m, ChannelWalk walk) {
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int64_t s = first % S, c = (first / S) % C;
  for (int64_t i = first; i < total; i += walk.stride, walk.step(s, c, S, C)) {
    const float xhat = (static_cast<float>(x[i]) - mean[c]) * invstd[c];
    const float g = static_cast<float>(dy[i]) - sdy[c] * inv_m - xhat * sdyx[c] * inv_m;
    dx[i] = static_cast<T>((w ? w[c] : 1.0f) * invstd[c] * g);
  }
}

// Calls fn(T{}) with T the storage type of a 16-bit dtype.
template <typename Fn>
void dispatch_half(DType t, const Fn& fn) {
  DDL_ASSERT(is_reduced_float(t), "batch_norm: expected a 16-bit dtype, got ", t);
  if (t == DType::Float16)
    fn(Half{});
  else
    fn(BFloat16{});
}

const float* f32_or_null(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }

// See Note [16-bit batch norm on CUDA]. x, y: [N, C, S] 16-bit; the rest [C] float32.
void batch_norm_forward_half(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& running_mean,
                             Tensor& running_var, bool training, double momentum, double eps, Tensor& y,
                             Tensor& save_mean, Tensor& save_invstd, cudaStream_t s) {
  const int64_t N = x.size(0), C = x.size(1), S = x.size(2);
  float* rm = running_mean.defined() ? running_mean.data<float>() : nullptr;
  float* rv = running_var.defined() ? running_var.data<float>() : nullptr;
  dispatch_half(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (training) {
      half_batch_stats<T>(x, momentum, eps, save_mean, save_invstd, rm, rv, s);
    } else {
      eval_stats_kernel<float>
          <<<blocks_for(C), kBlockThreads, 0, s>>>(rm, rv, eps, save_mean.data<float>(), save_invstd.data<float>(), C);
    }
    DDL_CUDA_KERNEL_CHECK();
    if (N * S == 0) return;
    const ChannelWalk walk = channel_walk(N * C * S, C, S);
    half_normalize_kernel<T><<<walk.blocks, kBlockThreads, 0, s>>>(x.data<T>(), f32_or_null(weight), f32_or_null(bias),
                                                                   save_mean.data<float>(), save_invstd.data<float>(),
                                                                   y.data<T>(), N * C * S, C, S, walk);
    DDL_CUDA_KERNEL_CHECK();
  });
}

// See Note [16-bit batch norm on CUDA]. grad_y, x, grad_input: [N, C, S] 16-bit; the rest [C] float32.
// N * S > 0 and C > 0 (the caller handles empty tensors).
void batch_norm_backward_half(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                              const Tensor& save_invstd, bool training, Tensor& grad_input, Tensor& grad_weight,
                              Tensor& grad_bias, cudaStream_t s) {
  const int64_t N = x.size(0), C = x.size(1), S = x.size(2);
  const bool dx_sums = training && grad_input.defined();  // the training dx needs both sums
  const TensorOptions f32(DType::Float32, x.device());
  const Tensor gw = grad_weight.defined() ? grad_weight : dx_sums ? empty({C}, f32) : Tensor();
  const Tensor gb = grad_bias.defined() ? grad_bias : dx_sums ? empty({C}, f32) : Tensor();
  dispatch_half(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (gw.defined() || gb.defined()) {
      channel_grads<T, float>(grad_y, x, save_mean, save_invstd, gw, gb, s);
    }
    if (!grad_input.defined()) return;
    const ChannelWalk walk = channel_walk(N * C * S, C, S);
    if (training) {
      half_train_grad_input_kernel<T><<<walk.blocks, kBlockThreads, 0, s>>>(
          grad_y.data<T>(), x.data<T>(), f32_or_null(weight), save_mean.data<float>(), save_invstd.data<float>(),
          gw.data<float>(), gb.data<float>(), grad_input.data<T>(), N * C * S, C, S,
          static_cast<float>(1.0 / static_cast<double>(N * S)), walk);
    } else {
      eval_grad_input_kernel<T, float>
          <<<walk.blocks, kBlockThreads, 0, s>>>(grad_y.data<T>(), f32_or_null(weight), save_invstd.data<float>(),
                                                 grad_input.data<T>(), N * C * S, C, S, walk);
    }
    DDL_CUDA_KERNEL_CHECK();
  });
}

std::string describe_bn(const char* op, const Tensor& x) {
  return ::ddl::detail::str_cat(op, ": ", x.dtype(), " input [N, C, S] = ", x.shape());
}

// x, y: [N, C, S]; weight, bias, running stats, save_*: [C]. See the header comment.
void batch_norm_forward_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& running_mean,
                             Tensor& running_var, bool training, double momentum, double eps, Tensor& y,
                             Tensor& save_mean, Tensor& save_invstd) {
  const int device = x.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const int64_t N = x.size(0), C = x.size(1), S = x.size(2);
  if (C == 0) return;
  if (is_reduced_float(x.dtype()))
    return batch_norm_forward_half(x, weight, bias, running_mean, running_var, training, momentum, eps, y, save_mean,
                                   save_invstd, s);
  const DType t = x.dtype();
  if (!training) {  // save_* are the running stats, whatever the batch size
    DDL_DISPATCH_FLOAT(t, "batch_norm", [&] {
      eval_stats_kernel<scalar_t>
          <<<blocks_for(C), kBlockThreads, 0, s>>>(running_mean.data<scalar_t>(), running_var.data<scalar_t>(), eps,
                                                   save_mean.data<scalar_t>(), save_invstd.data<scalar_t>(), C);
    });
    DDL_CUDA_KERNEL_CHECK();
    if (N * S == 0) return;
  }
  const char* op = "batch_norm";
  const TensorDesc xd(t, {N, C, S, 1}, op), pd(t, {1, C, 1, 1}, op);
  const Tensor w = weight.defined() ? weight : filled(x, C, 1.0, s);
  const Tensor b = bias.defined() ? bias : filled(x, C, 0.0, s);
  const Blend k;
  cudnnHandle_t h = cudnn_handle(device);
  if (training) {
    // cuDNN's running update is PyTorch's: r = (1 - momentum) r + momentum * batch stat,
    // with the unbiased variance; both pointers may be null (no running stats).
    DDL_CUDNN_CHECK(
        cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, k.one(t), k.zero(t), xd.get(), x.raw_data(),
                                               xd.get(), y.raw_data(), pd.get(), w.raw_data(), b.raw_data(), momentum,
                                               running_mean.defined() ? running_mean.raw_data() : nullptr,
                                               running_var.defined() ? running_var.raw_data() : nullptr, eps,
                                               save_mean.raw_data(), save_invstd.raw_data()),
        describe_bn(op, x), ", eps ", eps, ", momentum ", momentum);
  } else {
    DDL_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
                        h, CUDNN_BATCHNORM_SPATIAL, k.one(t), k.zero(t), xd.get(), x.raw_data(), xd.get(), y.raw_data(),
                        pd.get(), w.raw_data(), b.raw_data(), running_mean.raw_data(), running_var.raw_data(), eps),
                    describe_bn(op, x), " (eval), eps ", eps);
  }
}

// grad_y, x, grad_input: [N, C, S]; weight, save_*, grad_weight, grad_bias: [C].
// Training: dx from cuDNN (it recomputes nothing: it reads save_mean and
// save_invstd). dw = Σ dy x̂ and db = Σ dy in both modes.
void batch_norm_backward_cuda(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                              const Tensor& save_invstd, bool training, double eps, Tensor& grad_input,
                              Tensor& grad_weight, Tensor& grad_bias) {
  const int device = x.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const int64_t N = x.size(0), C = x.size(1), S = x.size(2);
  const DType t = x.dtype();
  const char* op = "batch_norm_backward";
  if (C == 0) return;
  if (N * S == 0) {  // eval mode on an empty batch: the sums are zero
    if (grad_weight.defined()) DDL_CUDA_CHECK(cudaMemsetAsync(grad_weight.raw_data(), 0, grad_weight.nbytes(), s));
    if (grad_bias.defined()) DDL_CUDA_CHECK(cudaMemsetAsync(grad_bias.raw_data(), 0, grad_bias.nbytes(), s));
    return;
  }
  if (is_reduced_float(t))
    return batch_norm_backward_half(grad_y, x, weight, save_mean, save_invstd, training, grad_input, grad_weight,
                                    grad_bias, s);
  if (training && grad_input.defined()) {
    // cuDNN always writes all three; missing outputs go to scratch buffers.
    const TensorDesc xd(t, {N, C, S, 1}, op), pd(t, {1, C, 1, 1}, op);
    const Tensor w = weight.defined() ? weight : filled(x, C, 1.0, s);
    const Tensor gw = grad_weight.defined() ? grad_weight : empty({C}, TensorOptions(t, x.device()));
    const Tensor gb = grad_bias.defined() ? grad_bias : empty({C}, TensorOptions(t, x.device()));
    const Blend k;
    // cuDNN wants the forward's epsilon even though it reads the saved statistics.
    DDL_CUDNN_CHECK(cudnnBatchNormalizationBackward(
                        cudnn_handle(device), CUDNN_BATCHNORM_SPATIAL, k.one(t), k.zero(t), k.one(t), k.zero(t),
                        xd.get(), x.raw_data(), xd.get(), grad_y.raw_data(), xd.get(), grad_input.raw_data(), pd.get(),
                        w.raw_data(), gw.raw_data(), gb.raw_data(), eps, save_mean.raw_data(), save_invstd.raw_data()),
                    describe_bn(op, x), ", eps ", eps);
    return;
  }
  DDL_DISPATCH_FLOAT(t, op, [&] {
    using T = scalar_t;
    if (grad_weight.defined() || grad_bias.defined()) {
      channel_grads<T, T>(grad_y, x, save_mean, save_invstd, grad_weight, grad_bias, s);
    }
    if (grad_input.defined()) {  // eval mode (training with an input gradient went to cuDNN)
      const ChannelWalk walk = channel_walk(N * C * S, C, S);
      eval_grad_input_kernel<T, T>
          <<<walk.blocks, kBlockThreads, 0, s>>>(grad_y.data<T>(), weight.defined() ? weight.data<T>() : nullptr,
                                                 save_invstd.data<T>(), grad_input.data<T>(), N * C * S, C, S, walk);
      DDL_CUDA_KERNEL_CHECK();
    }
  });
}

}  // namespace

using kernels::batch_norm_backward_kernel;
using kernels::batch_norm_forward_kernel;
DDL_REGISTER_KERNEL(batch_norm_forward_kernel, CUDA, &batch_norm_forward_cuda);
DDL_REGISTER_KERNEL(batch_norm_backward_kernel, CUDA, &batch_norm_backward_cuda);

}  // namespace ddl::cuda::detail
