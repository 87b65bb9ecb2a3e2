// CUDA batch_norm kernels. cuDNN (spatial mode, x viewed as [N, C, S, 1])
// does the training forward, the eval forward and the training input
// gradient. Its saved statistics are exactly the slot's: the batch mean and
// 1 / sqrt(biased var + eps). Small kernels of our own cover what cuDNN does
// not: eval-mode save_mean/save_invstd, eval-mode gradients, weight/bias
// gradients without an input gradient, and ones/zeros for a missing affine.
#include <algorithm>

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
// dy, x: [N, C, S]; mean, invstd, gw, gb: [C] (gw or gb may be null)
template <typename T>
__global__ void channel_grads_kernel(const T* dy, const T* x, const T* mean, const T* invstd, int64_t N, int64_t C,
                                     int64_t S, T* gw, T* gb) {
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
      if (gw) gw[c] = static_cast<T>(s_dyx[0] * static_cast<double>(invstd[c]));
      if (gb) gb[c] = static_cast<T>(s_dy[0]);
    }
    __syncthreads();  // the shared buffers are reused by the next channel
  }
}

// Eval mode (statistics are constants): dx = w invstd dy. dy, dx: [N, C, S]; w (or null), invstd: [C]
template <typename T>
__global__ void eval_grad_input_kernel(const T* dy, const T* w, const T* invstd, T* dx, int64_t total, int64_t C,
                                       int64_t S) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = (i / S) % C;
    dx[i] = (w ? w[c] : T(1)) * invstd[c] * dy[i];
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

// 16-bit inputs are refused up front with the CPU's wording: cuDNN's 16-bit batch norm
// wants float32 parameters, and ddl's share the input's dtype (autocast runs batch_norm
// in float32, autograd/ops/norm.cpp).
void check_dtype(DType t, const char* op) {
  DDL_CHECK(t == DType::Float32 || t == DType::Float64, op, ": expected a float32 or float64 tensor, got ", t);
}

std::string describe_bn(const char* op, const Tensor& x) {
  return ::ddl::detail::str_cat(op, ": ", x.dtype(), " input [N, C, S] = ", x.shape());
}

// x, y: [N, C, S]; weight, bias, running stats, save_*: [C]. See the header comment.
void batch_norm_forward_cuda(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& running_mean,
                             Tensor& running_var, bool training, double momentum, double eps, Tensor& y,
                             Tensor& save_mean, Tensor& save_invstd) {
  check_dtype(x.dtype(), "batch_norm");
  const int device = x.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const int64_t N = x.size(0), C = x.size(1), S = x.size(2);
  if (C == 0) return;
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
  check_dtype(x.dtype(), "batch_norm_backward");
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
      channel_grads_kernel<T><<<reduce_blocks(C), kReduceThreads, 0, s>>>(
          grad_y.data<T>(), x.data<T>(), save_mean.data<T>(), save_invstd.data<T>(), N, C, S,
          grad_weight.defined() ? grad_weight.data<T>() : nullptr, grad_bias.defined() ? grad_bias.data<T>() : nullptr);
      DDL_CUDA_KERNEL_CHECK();
    }
    if (grad_input.defined()) {  // eval mode (training with an input gradient went to cuDNN)
      eval_grad_input_kernel<T><<<blocks_for(N * C * S), kBlockThreads, 0, s>>>(
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
