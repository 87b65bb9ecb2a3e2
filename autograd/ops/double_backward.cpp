// Double-backward forms for conv2d and the losses, written with Variable ops so their
// results are differentiable again (Note [Double backward] in autograd/node.cpp). The
// conv2d gradients are themselves recorded ops whose backward is made of the same three
// public kernels of tensor/ops/conv.h, so conv2d is differentiable any number of times.
#include <ddl/autograd/ops/conv.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/pool.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/autograd/ops/softmax.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/adaptive_pool.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/indexing.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using Grads = std::vector<Tensor>;
using VGrads = std::vector<Variable>;
using Needs = std::vector<bool>;

// gx = conv2d_backward_input(g, w). For a cotangent u of gx: <u, gx> = <conv2d(u, w), g>,
// so d/dg = conv2d(u, w) and d/dw = conv2d_backward_weight(g, u).
Variable conv2d_input_grad(const Variable& g, const Variable& w, const Shape& x_shape, const Conv2dParams& p) {
  const Tensor gd = g.data(), wd = w.data();
  return autograd::make_result(
      conv2d_backward_input(gd, wd, x_shape, p), "Conv2dInputGradBackward", {&g, &w},
      [gd, wd, p](const Tensor& u, const Needs& n) -> Grads {
        return {n[0] ? conv2d(u, wd, Tensor(), p) : Tensor(),
                n[1] ? conv2d_backward_weight(gd, u, wd.shape(), p) : Tensor()};
      },
      [g, w, p](const Variable& u, const Needs& n) -> VGrads {
        return {n[0] ? conv2d(u, w, Variable(), p) : Variable(),
                n[1] ? conv2d_weight_grad(g, u, w.shape(), p) : Variable()};
      });
}

// gw = conv2d_backward_weight(g, x). For a cotangent v of gw: <v, gw> = <conv2d(x, v), g>,
// so d/dg = conv2d(x, v) and d/dx = conv2d_backward_input(g, v).
Variable conv2d_weight_grad(const Variable& g, const Variable& x, const Shape& w_shape, const Conv2dParams& p) {
  const Tensor gd = g.data(), xd = x.data();
  return autograd::make_result(
      conv2d_backward_weight(gd, xd, w_shape, p), "Conv2dWeightGradBackward", {&g, &x},
      [gd, xd, p](const Tensor& v, const Needs& n) -> Grads {
        return {n[0] ? conv2d(xd, v, Tensor(), p) : Tensor(),
                n[1] ? conv2d_backward_input(gd, v, xd.shape(), p) : Tensor()};
      },
      [g, x, p](const Variable& v, const Needs& n) -> VGrads {
        return {n[0] ? conv2d(x, v, Variable(), p) : Variable(),
                n[1] ? conv2d_input_grad(g, v, x.shape(), p) : Variable()};
      });
}

namespace {

// Pooling gradients are linear in the incoming gradient; each is recorded as an op whose
// backward is its adjoint (the pooling forward again, or a gather at the argmax), so that
// chains of them differentiate any number of times.
Variable max_pool_gather(const Variable& u, const Tensor& indices, const Shape& x_shape);

// gx = max_pool2d_backward(g): g scattered to each window's argmax.
Variable max_pool_scatter(const Variable& g, const Tensor& indices, const Shape& x_shape) {
  return autograd::make_result(
      max_pool2d_backward(g.data(), indices, x_shape), "MaxPool2dGradBackward", {&g},
      [indices](const Tensor& u, const Needs&) -> Grads {
        // The adjoint of a scatter is the gather at the same positions h * W + w of each plane.
        const int64_t last = u.dim() - 2;
        return {gather(u.flatten(last), last, indices.flatten(last)).reshape(indices.shape())};
      },
      [indices, x_shape](const Variable& u, const Needs&) -> VGrads { return {max_pool_gather(u, indices, x_shape)}; });
}

Variable max_pool_gather(const Variable& u, const Tensor& indices, const Shape& x_shape) {
  const int64_t last = u.dim() - 2;
  return autograd::make_result(
      gather(u.data().flatten(last), last, indices.flatten(last)).reshape(indices.shape()), "MaxPool2dGatherBackward",
      {&u},
      [indices, x_shape](const Tensor& v, const Needs&) -> Grads { return {max_pool2d_backward(v, indices, x_shape)}; },
      [indices, x_shape](const Variable& v, const Needs&) -> VGrads {
        return {max_pool_scatter(v, indices, x_shape)};
      });
}

// gx = avg_pool2d_backward(g), the adjoint of avg_pool2d; its own adjoint is avg_pool2d.
Variable avg_pool_input_grad(const Variable& g, const Shape& x_shape, const Pool2dParams& p) {
  return autograd::make_result(
      avg_pool2d_backward(g.data(), x_shape, p), "AvgPool2dGradBackward", {&g},
      [p](const Tensor& u, const Needs&) -> Grads { return {avg_pool2d(u, p)}; },
      [p](const Variable& u, const Needs&) -> VGrads { return {avg_pool2d(u, p)}; });
}

Variable adaptive_avg_pool_input_grad(const Variable& g, const Shape& x_shape) {
  const std::array<int64_t, 2> out{g.size(-2), g.size(-1)};
  return autograd::make_result(
      adaptive_avg_pool2d_backward(g.data(), x_shape), "AdaptiveAvgPool2dGradBackward", {&g},
      [out](const Tensor& u, const Needs&) -> Grads { return {adaptive_avg_pool2d(u, out)}; },
      [out](const Variable& u, const Needs&) -> VGrads { return {adaptive_avg_pool2d(u, out)}; });
}

// phi(x) = exp(-x^2 / 2) / sqrt(2 pi), the standard normal density.
constexpr double kInvSqrt2Pi = 0.3989422804014327;

// gelu'(x) = Phi(x) + x phi(x) as an op of x; its derivative is phi(x) (2 - x^2).
Variable gelu_derivative(const Variable& x) {
  const Tensor xd = x.data();
  const Tensor pdf = mul(exp(mul(mul(xd, xd), -0.5)), kInvSqrt2Pi);
  const Tensor cdf = mul(add(erf(mul(xd, 0.7071067811865476)), 1.0), 0.5);
  return autograd::make_result(
      add(cdf, mul(xd, pdf)), "GeluDerivativeBackward", {&x},
      [xd, pdf](const Tensor& g, const Needs&) -> Grads { return {mul(g, mul(pdf, rsub(mul(xd, xd), 2.0)))}; },
      [x](const Variable& g, const Needs&) -> VGrads {
        const Variable pdf = mul(exp(mul(mul(x, x), -0.5)), kInvSqrt2Pi);
        return {mul(g, mul(pdf, rsub(mul(x, x), 2.0)))};
      });
}

}  // namespace

namespace autograd {

DiffBackwardFn max_pool2d_double_backward(const Tensor& indices, const Shape& x_shape) {
  return
      [indices, x_shape](const Variable& g, const Needs&) -> VGrads { return {max_pool_scatter(g, indices, x_shape)}; };
}

DiffBackwardFn avg_pool2d_double_backward(const Shape& x_shape, const Pool2dParams& p) {
  return [x_shape, p](const Variable& g, const Needs&) -> VGrads { return {avg_pool_input_grad(g, x_shape, p)}; };
}

DiffBackwardFn adaptive_avg_pool2d_double_backward(const Shape& x_shape) {
  return [x_shape](const Variable& g, const Needs&) -> VGrads { return {adaptive_avg_pool_input_grad(g, x_shape)}; };
}

DiffBackwardFn gelu_double_backward(const Variable& x) {
  return [x](const Variable& g, const Needs&) -> VGrads { return {mul(g, gelu_derivative(x))}; };
}

namespace {

// The bias gradient: g summed over every dim but the channels (dim 0 of unbatched g).
Variable bias_grad(const Variable& g) { return g.dim() == 4 ? sum(g, {0, 2, 3}) : sum(g, {1, 2}); }

}  // namespace

DiffBackwardFn conv2d_double_backward(const Variable& x, const Variable& w, bool has_bias, const Conv2dParams& p) {
  return [x, w, has_bias, p](const Variable& g, const Needs& n) -> VGrads {
    VGrads out(n.size());
    if (n[0]) out[0] = conv2d_input_grad(g, w, x.shape(), p);
    if (n[1]) out[1] = conv2d_weight_grad(g, x, w.shape(), p);
    if (has_bias && n.size() > 2 && n[2]) out[2] = bias_grad(g);
    return out;
  };
}

DiffBackwardFn conv_transpose2d_double_backward(const Variable& x, const Variable& w, bool has_bias,
                                                const Conv2dParams& p, std::array<int64_t, 2> output_padding) {
  return [x, w, has_bias, p, output_padding](const Variable& g, const Needs& n) -> VGrads {
    // y = conv2d_backward_input(x, w): dx = conv2d(g, w), dw = conv2d_backward_weight(x, g),
    // with x's extra zero rows of Note [Large output_padding] (tensor/ops/conv_transpose.cpp):
    // dx drops them, dw sees x padded with them.
    const int64_t eh = output_padding[0] / p.stride[0], ew = output_padding[1] / p.stride[1];
    const int64_t h = x.dim() - 2;
    VGrads out(n.size());
    if (n[0]) {
      out[0] = conv2d(g, w, Variable(), p);
      if (eh > 0 || ew > 0) out[0] = out[0].narrow(h, 0, x.size(h)).narrow(h + 1, 0, x.size(h + 1));
    }
    if (n[1]) out[1] = conv2d_weight_grad(eh > 0 || ew > 0 ? pad(x, {0, ew, 0, eh}) : x, g, w.shape(), p);
    if (has_bias && n.size() > 2 && n[2]) out[2] = bias_grad(g);
    return out;
  };
}

// The gradient in the logits is g·(s·softmax(x) − M) where M = s·(target distribution)
// is a constant per element and s a constant per sample (its weight in the reduction, 0
// when ignored). nll_loss_backward w.r.t. log-probabilities with a unit incoming gradient
// is exactly −M, and s = Σ_c M, so both come from the existing kernel.
DiffBackwardFn cross_entropy_double_backward(const Variable& logits, const Tensor& target,
                                             const CrossEntropyOptions& opts) {
  return [logits, target, opts](const Variable& g, const Needs&) -> VGrads {
    const Tensor z = logits.data();
    const Tensor unit = ones(g.shape(), TensorOptions(g.dtype(), g.device()));
    const Tensor minus_m = nll_loss_backward(unit, z, target, opts, /*through_log_softmax=*/false);
    const Tensor s = neg(sum(minus_m, {1}, true));
    const Variable per_unit = add(mul(softmax(logits, 1), Variable(s)), Variable(minus_m));
    // g is a scalar for Mean/Sum and has the target's shape for None: it broadcasts over dim 1.
    const Variable gb = g.dim() == 0 ? g : g.unsqueeze(1);
    return {mul(per_unit, gb)};
  };
}

DiffBackwardFn cross_entropy_matrix_double_backward(const Variable& logits, const Tensor& M, const Tensor& denominator,
                                                    Reduction reduction, const Tensor& valid) {
  return [logits, M, denominator, reduction, valid](const Variable& g, const Needs&) -> VGrads {
    // d loss / d logits = factor·(softmax·sum_c M − M).
    Variable factor = reduction == Reduction::None  ? g.unsqueeze(1)
                      : reduction == Reduction::Sum ? g
                                                    : div(g, Variable(denominator));
    // Ignored rows take a zero factor, not g/0 (every target ignored): their second-order
    // terms are then 0, as PyTorch's, instead of 0·inf = NaN.
    if (valid.defined()) factor = where(valid, factor, Variable(zeros({}, TensorOptions(g.dtype(), g.device()))));
    const Tensor row_mass = sum(M, {1}, /*keepdim=*/true);
    return {mul(sub(mul(softmax(logits, 1), Variable(row_mass)), Variable(M)), factor)};
  };
}

DiffBackwardFn nll_loss_double_backward(const Tensor& log_probs, const Tensor& target,
                                        const CrossEntropyOptions& opts) {
  return [log_probs, target, opts](const Variable& g, const Needs&) -> VGrads {
    // −M (with Mean's 1/count) is the gradient for a unit incoming gradient; g scales it per
    // sample (None) or as a whole, broadcasting over the class dim 1.
    const Tensor unit = ones(g.shape(), TensorOptions(g.dtype(), g.device()));
    const Tensor minus_m = nll_loss_backward(unit, log_probs, target, opts, /*through_log_softmax=*/false);
    return {mul(Variable(minus_m), g.dim() == 0 ? g : g.unsqueeze(1))};
  };
}

namespace {
// Every dim but the channel dim 1: the dims batch_norm reduces over.
std::vector<int64_t> non_channel_dims(int64_t rank) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  return dims;
}
// [1, C, 1, ...]: how a per-channel vector broadcasts against x.
Shape channel_shape(int64_t rank, int64_t c) {
  std::vector<int64_t> s(static_cast<size_t>(rank), 1);
  s[1] = c;
  return Shape(s);
}
}  // namespace

// The batch-norm backward (Ioffe and Szegedy 2015, section 3) in Variable ops:
//   xhat = (x - mean) * invstd,  dw = sum(g * xhat),  db = sum(g),
//   dx = w * invstd * (g - mean(g) - xhat * mean(g * xhat))   with batch statistics,
//   dx = w * invstd * g                                       with running statistics.
DiffBackwardFn batch_norm_double_backward(const Variable& x, const Variable& weight, const Variable& bias,
                                          const Tensor& mean, const Tensor& invstd, bool use_batch_stats, double eps) {
  return [x, weight, bias, mean, invstd, use_batch_stats, eps](const Variable& g, const Needs& n) -> VGrads {
    const std::vector<int64_t> red = non_channel_dims(x.dim());
    const Shape cs = channel_shape(x.dim(), x.size(1));
    Variable xhat, inv;
    if (use_batch_stats) {
      const Variable centered = sub(x, ddl::mean(x, red, true));
      inv = rsqrt(add(ddl::mean(mul(centered, centered), red, true), eps));
      xhat = mul(centered, inv);
    } else {
      inv = Variable(invstd.reshape(cs));
      xhat = mul(sub(x, Variable(mean.reshape(cs))), inv);
    }
    VGrads out;
    if (n[0]) {
      Variable dx =
          use_batch_stats ? sub(sub(g, ddl::mean(g, red, true)), mul(xhat, ddl::mean(mul(g, xhat), red, true))) : g;
      dx = mul(dx, inv);
      out.push_back(weight.defined() ? mul(dx, weight.reshape(cs)) : dx);
    } else {
      out.emplace_back();
    }
    size_t k = 1;
    if (weight.defined()) out.push_back(n[k++] ? sum(mul(g, xhat), red) : Variable());
    if (bias.defined()) out.push_back(n[k++] ? sum(g, red) : Variable());
    return out;
  };
}

// The layer-norm backward (Ba, Kiros, Hinton 2016) in Variable ops, statistics recomputed from x.
DiffBackwardFn normalize_trailing_double_backward(const Variable& x, int64_t k, double eps) {
  return [x, k, eps](const Variable& g, const Needs&) -> VGrads {
    // The statistics in float64, as the forward (layer_norm.cpp).
    const Variable x2 = x.reshape({-1, k}).to(DType::Float64);
    const Variable centered = sub(x2, mean(x2, {1}, true));
    const Variable invstd64 = rsqrt(add(mean(mul(centered, centered), {1}, true), eps));
    const Variable xhat = mul(centered, invstd64).to(x.dtype());
    const Variable invstd = invstd64.to(x.dtype());
    const Variable g2 = g.reshape({-1, k});
    const Variable dx = sub(sub(g2, mean(g2, {1}, true)), mul(xhat, mean(mul(g2, xhat), {1}, true)));
    return {mul(dx, invstd).reshape(g.shape())};
  };
}

DiffBackwardFn mse_loss_double_backward(const Variable& a, const Variable& b, Reduction reduction) {
  return [a, b, reduction](const Variable& g, const Needs& n) -> VGrads {
    // d/da = 2·(a − b)·g (÷ numel for Mean); d/db its negation.
    const double k = reduction == Reduction::Mean ? 2.0 / static_cast<double>(a.numel()) : 2.0;
    const Variable ga = mul(sub(a, b), mul(g, k));
    return {n[0] ? ga : Variable(), n[1] ? neg(ga) : Variable()};
  };
}

}  // namespace autograd
}  // namespace ddl
