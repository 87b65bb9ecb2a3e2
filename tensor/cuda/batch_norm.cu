// CUDA batch_norm kernels. cuDNN (spatial mode, x viewed as [N, C, S, 1])
// does the training forward, the eval forward and the training input
// gradient. Its saved statistics are exactly the slot's: the batch mean and
// 1 / sqrt(biased var + eps). Small kernels of our own cover what cuDNN does
// not: eval-mode save_mean/save_invstd, eval-mode gradients, weight/bias
// gradients without an input gradient, ones/zeros for a missing affine, and
// all of float16/bfloat16 (Note [16-bit batch norm on CUDA]).
#include <algorithm>

#include "tensor/cuda/block_reduce.h"
#include "tensor/cuda/dnn.h"
#include "tensor/factory.h"
#include "tensor/norm.h"

namespace ddl::cuda::detail {
namespace {

constexpr int kReduceThreads = 256;  // power of two: the tree reduction halves it

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

// One block per channel c: gw[c] = invstd[c] Σ dy (x − mean[c]), gb[c] = Σ dy
// over n, s, summed in double in a fixed order (deterministic).
// dy, x: [N, C, S] of T; mean, invstd, gw, gb: [C] of P (gw or gb may be null)
template <typename T, typename P>
__global__ void channel_grads_kernel(const T* dy, const T* x, const P* mean, const P* invstd, int64_t N, int64_t C,
                                     int64_t S, P* gw, P* gb) {
  __shared__ double s_dy[kReduceThreads], s_dyx[kReduceThreads];
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    const double m = mean[c];
    double a = 0.0, b = 0.0;
    for (int64_t i = threadIdx.x; i < N * S; i += blockDim.x) {
      const int64_t off = ((i / S) * C + c) * S + i % S;
      const double g = dy[off];
      a += g;
      b += g * (static_cast<double>(x[off]) - m);
    }
    s_dy[threadIdx.x] = a, s_dyx[threadIdx.x] = b;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        s_dy[threadIdx.x] += s_dy[threadIdx.x + half];
        s_dyx[threadIdx.x] += s_dyx[threadIdx.x + half];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (gw) gw[c] = static_cast<P>(s_dyx[0] * static_cast<double>(invstd[c]));
      if (gb) gb[c] = static_cast<P>(s_dy[0]);
    }
    __syncthreads();  // the shared buffers are reused by the next channel
  }
}

// Eval mode (statistics are constants): dx = w invstd dy, computed in P.
// dy, dx: [N, C, S] of T; w (or null), invstd: [C] of P
template <typename T, typename P>
__global__ void eval_grad_input_kernel(const T* dy, const P* w, const P* invstd, T* dx, int64_t total, int64_t C,
                                       int64_t S) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / S) % C;
    dx[i] = static_cast<T>((w ? w[c] : P(1)) * invstd[c] * static_cast<P>(dy[i]));
  }
}

unsigned int reduce_blocks(int64_t C) { return static_cast<unsigned int>(std::min<int64_t>(C, 65535)); }

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
// sums in double, fixed order, as channel_grads_kernel), and store y and dx in
// the 16-bit type once. weight, bias, running and saved statistics are float32,
// as PyTorch keeps them for 16-bit inputs; the results match the CPU's (a
// float32 kernel on a widened x) up to summation order.

struct SumD {
  __device__ double operator()(double a, double b) const { return a + b; }
};

// Training statistics, one block per channel c: the mean, then Σ (x − mean)²
// (two passes, as the CPU); save_* and the running update (unbiased variance,
// as PyTorch) from thread 0. x: [N, C, S]; sm, si: [C]; rm, rv: [C] or null
template <typename T>
__global__ void half_batch_stats_kernel(const T* x, int64_t N, int64_t C, int64_t S, double momentum, double eps,
                                        float* sm, float* si, float* rm, float* rv) {
  __shared__ BlockScratch<double> scratch;
  const int64_t M = N * S;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    double a = 0.0;
    for (int64_t i = threadIdx.x; i < M; i += blockDim.x) a += static_cast<float>(x[((i / S) * C + c) * S + i % S]);
    const double mean = block_reduce(a, SumD{}, scratch.get()) / static_cast<double>(M);
    double q = 0.0;
    for (int64_t i = threadIdx.x; i < M; i += blockDim.x) {
      const double d = static_cast<float>(x[((i / S) * C + c) * S + i % S]) - mean;
      q += d * d;
    }
    const double m2 = block_reduce(q, SumD{}, scratch.get());
    if (threadIdx.x == 0) {
      sm[c] = static_cast<float>(mean);
      si[c] = static_cast<float>(1.0 / sqrt(m2 / static_cast<double>(M) + eps));
      if (rm) {
        rm[c] = static_cast<float>((1.0 - momentum) * rm[c] + momentum * mean);
        rv[c] = static_cast<float>((1.0 - momentum) * rv[c] + momentum * m2 / static_cast<double>(M - 1));
      }
    }
  }
}

// y = (x − mean) (w invstd) + b in float, rounded to T once.
// x, y: [N, C, S]; w, b (or null), mean, invstd: [C]
template <typename T>
__global__ void half_normalize_kernel(const T* x, const float* w, const float* b, const float* mean,
                                      const float* invstd, T* y, int64_t total, int64_t C, int64_t S) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / S) % C;
    const float scale = (w ? w[c] : 1.0f) * invstd[c];
    y[i] = static_cast<T>((static_cast<float>(x[i]) - mean[c]) * scale + (b ? b[c] : 0.0f));
  }
}

// Training input gradient, x̂ = (x − mean) invstd:
// dx = w invstd (dy − Σdy / M − x̂ Σ(dy x̂) / M), with sdyx = Σ(dy x̂) and sdy = Σ dy
// from channel_grads_kernel. dy, x, dx: [N, C, S]; w (or null), the rest: [C]
template <typename T>
__global__ void half_train_grad_input_kernel(const T* dy, const T* x, const float* w, const float* mean,
                                             const float* invstd, const float* sdyx, const float* sdy, T* dx,
                                             int64_t total, int64_t C, int64_t S, float inv_m) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / S) % C;
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
      half_batch_stats_kernel<T><<<reduce_blocks(C), kBlockThreads, 0, s>>>(  // block_reduce needs kBlockThreads
          x.data<T>(), N, C, S, momentum, eps, save_mean.data<float>(), save_invstd.data<float>(), rm, rv);
    } else {
      eval_stats_kernel<float>
          <<<blocks_for(C), kBlockThreads, 0, s>>>(rm, rv, eps, save_mean.data<float>(), save_invstd.data<float>(), C);
    }
    DDL_CUDA_KERNEL_CHECK();
    if (N * S == 0) return;
    half_normalize_kernel<T><<<blocks_for(N * C * S), kBlockThreads, 0, s>>>(
        x.data<T>(), f32_or_null(weight), f32_or_null(bias), save_mean.data<float>(), save_invstd.data<float>(),
        y.data<T>(), N * C * S, C, S);
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
      channel_grads_kernel<T, float><<<reduce_blocks(C), kReduceThreads, 0, s>>>(
          grad_y.data<T>(), x.data<T>(), save_mean.data<float>(), save_invstd.data<float>(), N, C, S,
          gw.defined() ? gw.data<float>() : nullptr, gb.defined() ? gb.data<float>() : nullptr);
      DDL_CUDA_KERNEL_CHECK();
    }
    if (!grad_input.defined()) return;
    if (training) {
      half_train_grad_input_kernel<T><<<blocks_for(N * C * S), kBlockThreads, 0, s>>>(
          grad_y.data<T>(), x.data<T>(), f32_or_null(weight), save_mean.data<float>(), save_invstd.data<float>(),
          gw.data<float>(), gb.data<float>(), grad_input.data<T>(), N * C * S, C, S,
          static_cast<float>(1.0 / static_cast<double>(N * S)));
    } else {
      eval_grad_input_kernel<T, float><<<blocks_for(N * C * S), kBlockThreads, 0, s>>>(
          grad_y.data<T>(), f32_or_null(weight), save_invstd.data<float>(), grad_input.data<T>(), N * C * S, C, S);
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
      channel_grads_kernel<T, T><<<reduce_blocks(C), kReduceThreads, 0, s>>>(
          grad_y.data<T>(), x.data<T>(), save_mean.data<T>(), save_invstd.data<T>(), N, C, S,
          grad_weight.defined() ? grad_weight.data<T>() : nullptr, grad_bias.defined() ? grad_bias.data<T>() : nullptr);
      DDL_CUDA_KERNEL_CHECK();
    }
    if (grad_input.defined()) {  // eval mode (training with an input gradient went to cuDNN)
      eval_grad_input_kernel<T, T><<<blocks_for(N * C * S), kBlockThreads, 0, s>>>(
          grad_y.data<T>(), weight.defined() ? weight.data<T>() : nullptr, save_invstd.data<T>(), grad_input.data<T>(),
          N * C * S, C, S);
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
