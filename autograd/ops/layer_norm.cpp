// layer_norm and group_norm on Variables. Both reduce to normalize_trailing on a
// [rows, K] view; its backward is the usual closed form (Ba, Kiros, Hinton 2016,
// "Layer Normalization"): dx = invstd * (g - mean(g) - xhat * mean(g * xhat)).
// The affine part is ordinary broadcast mul/add, so its gradients come for free.
#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/layer_norm.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cpu/layer_norm_rows.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

Variable normalize_trailing(const Variable& x, int64_t num_dims, double eps) {
  DDL_CHECK(x.defined(), "normalize_trailing: input is undefined");
  DDL_CHECK(num_dims >= 1 && num_dims <= x.dim(), "normalize_trailing: cannot normalise the last ", num_dims,
            " dims of ", x.shape());
  DDL_CHECK(is_floating(x.dtype()), "normalize_trailing: expected a float input, got ", x.dtype());
  int64_t k = 1;
  for (int64_t d = x.dim() - num_dims; d < x.dim(); ++d) k *= x.size(d);
  // Empty normalised dims: nothing to normalise, an empty result (as PyTorch).
  if (k == 0) return mul(x, 1.0);
  // x2: [rows, k]; mean, invstd: [rows, 1]. As Note [Variance in float64] (tensor/ops/reduce.cpp):
  // two passes in float64, xhat and invstd rounded once. In float32, values near 1e4
  // summed to a mean 3e-4 off, 1e-3 standard deviations for a spread of 1.
  if (x.data().device().is_cpu() && x.dtype() == DType::Float32) {
    // The same math in one pass per row each way (tensor/cpu/layer_norm_rows.h).
    const Tensor xc = x.data().reshape({-1, k}).contiguous(), xhat = empty_like(xc);
    const Tensor invstd = empty({xc.size(0), 1}, TensorOptions(DType::Float32, xc.device()));
    cpu::layer_norm_rows_f32(xc.data<float>(), xhat.data<float>(), invstd.data<float>(), xc.size(0), k, eps);
    return autograd::make_result(
        xhat.reshape(x.shape()), "NormalizeTrailingBackward", {&x},
        [xhat, invstd, k](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
          const Tensor gc = g.reshape({-1, k}).contiguous(), dx = empty_like(xhat);
          cpu::layer_norm_rows_backward_f32(gc.data<float>(), xhat.data<float>(), invstd.data<float>(),
                                            dx.data<float>(), xhat.size(0), k);
          return {dx.reshape(g.shape())};
        },
        autograd::normalize_trailing_double_backward(x, k, eps));
  }
  const Tensor x2 = x.data().reshape({-1, k}).to(DType::Float64);
  const Tensor centered = sub(x2, mean(x2, {1}, true));
  const Tensor invstd64 = rsqrt(add(mean(mul(centered, centered), {1}, true), eps));
  const Tensor xhat = mul(centered, invstd64).to(x.dtype());
  const Tensor invstd = invstd64.to(x.dtype());
  const Shape shape = x.shape();
  return autograd::make_result(
      xhat.reshape(shape), "NormalizeTrailingBackward", {&x},
      [xhat, invstd, k](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        const Tensor g2 = g.reshape({-1, k});
        const Tensor mean_g = mean(g2, {1}, true);
        const Tensor mean_gx = mean(mul(g2, xhat), {1}, true);
        Tensor dx = sub(sub(g2, mean_g), mul(xhat, mean_gx));
        return {mul(dx, invstd).reshape(g.shape())};
      },
      autograd::normalize_trailing_double_backward(x, k, eps));  // double_backward.cpp
}

Variable layer_norm(const Variable& x, const Shape& normalized_shape, const Variable& weight, const Variable& bias,
                    double eps) {
  // See Note [Autocast]: float32 list; the affine parameters are widened with the input, as PyTorch casts all.
  if (autocast::needs_float32(x) || autocast::needs_float32(weight) || autocast::needs_float32(bias))
    return layer_norm(autocast::to_float32(x), normalized_shape, autocast::to_float32(weight),
                      autocast::to_float32(bias), eps);
  DDL_CHECK(x.defined() && is_floating(x.dtype()), "layer_norm: expected a float input, got ",
            x.defined() ? describe(x.data()) : "an undefined one");
  const int64_t nd = normalized_shape.size();
  bool ok = nd >= 1 && x.dim() >= nd;
  for (int64_t i = 0; ok && i < nd; ++i) ok = x.size(x.dim() - nd + i) == normalized_shape[i];
  DDL_CHECK(ok, "layer_norm: input ", x.shape(), " does not end in normalized_shape ", normalized_shape);
  DDL_CHECK(!weight.defined() || weight.shape() == normalized_shape, "layer_norm: weight ", weight.shape(),
            " must have normalized_shape ", normalized_shape);
  DDL_CHECK(!bias.defined() || bias.shape() == normalized_shape, "layer_norm: bias ", bias.shape(),
            " must have normalized_shape ", normalized_shape);
  Variable y = normalize_trailing(x, nd, eps);
  if (weight.defined()) y = mul(y, weight);
  if (bias.defined()) y = add(y, bias);
  return y;
}

Variable group_norm(const Variable& x, int64_t num_groups, const Variable& weight, const Variable& bias, double eps) {
  if (autocast::needs_float32(x) || autocast::needs_float32(weight) || autocast::needs_float32(bias))  // As layer_norm.
    return group_norm(autocast::to_float32(x), num_groups, autocast::to_float32(weight), autocast::to_float32(bias),
                      eps);
  DDL_CHECK(x.defined() && is_floating(x.dtype()), "group_norm: expected a float input, got ",
            x.defined() ? describe(x.data()) : "an undefined one");
  DDL_CHECK(x.dim() >= 2, "group_norm: expected [N, C, *], got ", x.shape());
  const int64_t n = x.size(0), c = x.size(1);
  DDL_CHECK(num_groups > 0 && c % num_groups == 0, "group_norm: num_groups=", num_groups,
            " must divide the channel count ", c, " of ", x.shape());
  DDL_CHECK(!weight.defined() || weight.shape() == Shape{c}, "group_norm: weight ", weight.shape(), " must be [", c,
            "]");
  DDL_CHECK(!bias.defined() || bias.shape() == Shape{c}, "group_norm: bias ", bias.shape(), " must be [", c, "]");
  // Each group's extent spelled out: reshape cannot infer a -1 for an empty batch.
  int64_t group_extent = c / num_groups;
  for (int64_t d = 2; d < x.dim(); ++d) group_extent *= x.size(d);
  Variable y = normalize_trailing(x.reshape({n, num_groups, group_extent}), 1, eps).reshape(x.shape());
  // weight, bias: [C] viewed as [C, 1, ..., 1] to broadcast over the spatial dims.
  std::vector<int64_t> affine_shape(static_cast<size_t>(x.dim() - 1), 1);
  affine_shape[0] = c;
  if (weight.defined()) y = mul(y, weight.reshape(Shape(affine_shape)));
  if (bias.defined()) y = add(y, bias.reshape(Shape(affine_shape)));
  return y;
}

}  // namespace ddl
