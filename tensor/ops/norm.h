// Batch normalisation over the channel dim of [N, C] or [N, C, *] tensors,
// forward and backward, with PyTorch's semantics for running statistics.
// float16/bfloat16 inputs take float32 parameters and statistics, as PyTorch's
// cuDNN path does, or all of them in the input's dtype (Note [16-bit batch norm
// parameters]). Layer/group norm are not here; autograd is in autograd/ops/norm.h.
#pragma once

#include <array>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

struct BatchNormResult {
  Tensor y;            // same shape and dtype as x, contiguous
  Tensor save_mean;    // [C]: the mean used to normalise (batch or running)
  Tensor save_invstd;  // [C]: 1 / sqrt(var + eps) used to normalise
};

// The dtype of saved statistics for input dtype x, and of weight, bias and running
// statistics unless they come in a 16-bit x's own dtype: x itself for float32/float64,
// float32 for float16/bfloat16.
DType batch_norm_param_dtype(DType x);

// Note [16-bit batch norm parameters]
// A model converted wholly with .to(bfloat16) has 16-bit weight, bias and running
// statistics, and PyTorch takes those too (docs/mixed_precision.md compares). Here they
// are widened to float32 around the same kernels, so the result is the float32-parameter
// result on the widened parameters; the updated running statistics and the weight and
// bias gradients are rounded to 16 bits once. All [C] tensors of one call share a dtype:
// mixing float32 and 16-bit ones is refused.

// x: [N, C] or [N, C, *]; weight, bias: [C] or undefined (no affine transform);
// running_mean, running_var: [C] or both undefined (always use batch stats).
// training (or no running stats): normalise with the batch mean and biased
// variance, and update defined running stats in place with `momentum`, using
// the unbiased batch variance as PyTorch does. Eval: use the running stats.
// Every [C] tensor has batch_norm_param_dtype(x.dtype()), or every one x's 16-bit dtype;
// a 16-bit x is normalised in float32 and y rounded once (Note [Half compute] in
// tensor/core/half.h). save_mean and save_invstd have batch_norm_param_dtype(x.dtype()).
BatchNormResult batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor running_mean,
                           Tensor running_var, bool training, double momentum, double eps);

struct BatchNormGrads {
  Tensor grad_input, grad_weight, grad_bias;  // undefined where not asked for
};

// The gradients of batch_norm. `use_batch_stats` must be what the forward used
// (training or no running stats): then the mean and variance depend on x.
// eps must be the forward's (cuDNN's backward asks for it; the CPU uses save_invstd).
// needs: {grad_input, grad_weight, grad_bias}. weight may be undefined (= ones).
// grad_y and grad_input have x's dtype; save_mean and save_invstd have
// batch_norm_param_dtype(x.dtype()); weight that or x's 16-bit dtype, and grad_weight
// and grad_bias have weight's dtype (batch_norm_param_dtype when weight is undefined).
BatchNormGrads batch_norm_backward(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                                   const Tensor& save_invstd, bool use_batch_stats, double eps,
                                   std::array<bool, 3> needs);

}  // namespace ddl

namespace ddl::kernels {

// x, y: [N, C, S] contiguous; weight, bias: [C] or undefined; running stats: [C]
// contiguous or undefined (then training is true). Writes save_mean and
// save_invstd ([C]): batch stats when training, running stats otherwise.
// x and y may be 16-bit; then every [C] tensor is float32.
using BatchNormForwardFn = void(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& running_mean,
                                Tensor& running_var, bool training, double momentum, double eps, Tensor& y,
                                Tensor& save_mean, Tensor& save_invstd);
// grad_y, x, grad_input: [N, C, S] contiguous; the rest [C]. Outputs left
// undefined are not computed. eps is the forward's.
using BatchNormBackwardFn = void(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                                 const Tensor& save_invstd, bool training, double eps, Tensor& grad_input,
                                 Tensor& grad_weight, Tensor& grad_bias);

DDL_DECLARE_KERNEL(batch_norm_forward_kernel, BatchNormForwardFn);
DDL_DECLARE_KERNEL(batch_norm_backward_kernel, BatchNormBackwardFn);

}  // namespace ddl::kernels
