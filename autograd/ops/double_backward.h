// Differentiable (double-backward) forms of ops whose forward lives in another file:
// each returns the DiffBackwardFn that op passes to make_result. See Note [Double
// backward] in autograd/node.cpp. Only the backward formulas live here; the forwards stay
// in conv.cpp, loss.cpp and regression_loss.cpp.
#pragma once

#include <ddl/autograd/node.h>
#include <ddl/tensor/ops/conv.h>
#include <ddl/tensor/ops/pool.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl {

// conv2d's input and weight gradients as differentiable ops (each linear in both of its
// arguments, so each one's gradient is the other or a conv2d forward).
// g: [N, K, P, Q], w: [K, C/groups, R, S], x: [N, C, H, W].
Variable conv2d_input_grad(const Variable& g, const Variable& w, const Shape& x_shape, const Conv2dParams& p);
Variable conv2d_weight_grad(const Variable& g, const Variable& x, const Shape& w_shape, const Conv2dParams& p);

namespace autograd {
// For max_pool2d and adaptive_max_pool2d: indices as their forward returned them.
DiffBackwardFn max_pool2d_double_backward(const Tensor& indices, const Shape& x_shape);
// For avg_pool2d(x, p) and adaptive_avg_pool2d(x, output size).
DiffBackwardFn avg_pool2d_double_backward(const Shape& x_shape, const Pool2dParams& p);
DiffBackwardFn adaptive_avg_pool2d_double_backward(const Shape& x_shape);
// For exact gelu(x) = x Phi(x).
DiffBackwardFn gelu_double_backward(const Variable& x);

// For conv2d(x, w, bias, p): gradients for x, w and (when has_bias) bias.
DiffBackwardFn conv2d_double_backward(const Variable& x, const Variable& w, bool has_bias, const Conv2dParams& p);
// For conv_transpose2d(x, w, bias, p, output_padding) (conv2d's input gradient as a forward).
DiffBackwardFn conv_transpose2d_double_backward(const Variable& x, const Variable& w, bool has_bias,
                                                const Conv2dParams& p, std::array<int64_t, 2> output_padding);
// For cross_entropy(logits, target, opts) with class-index targets.
DiffBackwardFn cross_entropy_double_backward(const Variable& logits, const Tensor& target,
                                             const CrossEntropyOptions& opts);
// For cross_entropy written as loss_n = -sum_c M[n, c] log_softmax(logits)[n, c], reduced
// (a scalar `denominator` divides for Mean): the class-weight and probability-target path.
// valid (bool, broadcasting over dim 1), when defined, zeroes the gradient of ignored rows.
DiffBackwardFn cross_entropy_matrix_double_backward(const Variable& logits, const Tensor& M, const Tensor& denominator,
                                                    Reduction reduction, const Tensor& valid = Tensor());
// For nll_loss(log_probs, target, opts) without class weights: the gradient is linear in
// the incoming one and constant in log_probs.
DiffBackwardFn nll_loss_double_backward(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opts);
// For batch_norm(x, weight, bias, ...): gradients for x, then weight and bias when defined
// (the order of its make_result inputs). mean, invstd: [C], what the forward normalised
// with; with batch statistics they are recomputed from x so that they are differentiated.
DiffBackwardFn batch_norm_double_backward(const Variable& x, const Variable& weight, const Variable& bias,
                                          const Tensor& mean, const Tensor& invstd, bool use_batch_stats, double eps);
// For normalize_trailing(x, num_dims, eps) (layer_norm, group_norm): x viewed as [rows, k].
DiffBackwardFn normalize_trailing_double_backward(const Variable& x, int64_t k, double eps);
// For mse_loss(a, b, reduction).
DiffBackwardFn mse_loss_double_backward(const Variable& a, const Variable& b, Reduction reduction);
}  // namespace autograd

}  // namespace ddl
