// Batch norm followed by ReLU as one op, y = relu(batch_norm(x)), for the CPU
// (Note [Batch norm + ReLU] in tensor/cpu/batch_norm.cpp). Internal: nn::Sequential
// fuses a BatchNorm followed by a ReLU through autograd/ops/norm_relu.h; there is
// no public op, and other devices and 16-bit inputs keep the unfused pair.
#pragma once

#include <ddl/tensor/ops/norm.h>

namespace ddl::detail {

// Whether batch_norm_relu runs for x: a float32 or float64 CPU tensor.
bool batch_norm_relu_fusable(const Tensor& x);

// batch_norm (tensor/ops/norm.h, same arguments and checks) with y = relu(bn(x)).
// x must be batch_norm_relu_fusable.
BatchNormResult batch_norm_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor running_mean,
                                Tensor running_var, bool training, double momentum, double eps);

// batch_norm_backward for grad_y, the gradient of y = batch_norm_relu(x, ...).y:
// ReLU's mask is taken from y (y <= 0: no gradient), so bn(x) is never needed.
BatchNormGrads batch_norm_relu_backward(const Tensor& grad_y, const Tensor& x, const Tensor& y, const Tensor& weight,
                                        const Tensor& save_mean, const Tensor& save_invstd, bool use_batch_stats,
                                        double eps, std::array<bool, 3> needs);

}  // namespace ddl::detail

namespace ddl::kernels {

// As batch_norm_forward_kernel, writing y = relu(bn(x)).
DDL_DECLARE_KERNEL(batch_norm_relu_forward_kernel, BatchNormForwardFn);
// As batch_norm_backward_kernel, with grad_y the gradient of y = relu(bn(x)) ([N, C, S]).
using BatchNormReluBackwardFn = void(const Tensor& grad_y, const Tensor& x, const Tensor& y, const Tensor& weight,
                                     const Tensor& save_mean, const Tensor& save_invstd, bool training, double eps,
                                     Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias);
DDL_DECLARE_KERNEL(batch_norm_relu_backward_kernel, BatchNormReluBackwardFn);

}  // namespace ddl::kernels
