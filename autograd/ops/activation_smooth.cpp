// The smooth activations of activation_more.h (ELU family, logsigmoid, mish, GLU, softmin,
// softsign, tanhshrink) and PReLU/RReLU, each composed of differentiable ops. Where PyTorch
// branches, so does this code, on the same comparison (x > 0 for elu and prelu, in float32),
// so the value and the gradient at the kink and at NaN are the branch PyTorch takes.
#include <algorithm>
#include <cmath>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/activation_detail.h>
#include <ddl/autograd/ops/activation_more.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/softmax.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/join.h>

namespace ddl {

using detail::check_float_input;
using detail::in_float32;
using detail::only;
using detail::scalar_like;

namespace {

// PyTorch's elu: x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1). Its
// vectorized backward tests x > 0 too, so NaN takes the exponential branch (a NaN gradient;
// but see Note [NaN in bfloat16 backward]); its double backward is 0 at x = 0.
Variable elu_impl(const Variable& x, double alpha, double scale, double input_scale) {
  const bool nan_linear = detail::scalar_kernel(x);
  return in_float32(x, [&](const Variable& v) {
    const Tensor xd = v.data(), zero = eq(xd, 0.0);
    Tensor pos = gt(xd, 0.0);
    if (nan_linear) pos = detail::mask_or(pos, detail::isnan_mask(xd));
    const Tensor expo = detail::mask_not(detail::mask_or(pos, zero));
    const Variable vn = only(expo, v);  // +inf does not reach exp
    const Variable yn = mul(sub(exp(mul(vn, input_scale)), 1.0), alpha * scale);
    const Variable y0 = detail::linear_piece(zero, v, mul(xd, 0.0), full_like(xd, alpha * scale * input_scale));
    return where(pos, mul(v, scale), where(zero, y0, yn));
  });
}

// log(1 + exp(v)) that neither overflows nor loses its gradient: v + log(1 + exp(-v))
// above 0, log(1 + exp(v)) at and below (gradient 1/2 at 0, NaN at NaN).
Variable softplus_stable(const Variable& v) {
  const Tensor pos = gt(v.data(), 0.0);
  const Variable vp = only(pos, v);
  const Variable vn = where(pos, scalar_like(v, 0.0), v);
  return where(pos, add(vp, log(add(exp(neg(vp)), 1.0))), log(add(exp(vn), 1.0)));
}

// PyTorch's mish backward (infinitely_differentiable_mish_backward in its
// FunctionsManual.cpp), as Variables so that it is differentiable:
// g * (tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)) with sp = log1p(exp(x)) written plainly,
// so its own derivative is NaN where exp(x) overflows, as there.
Variable mish_grad(const Variable& g, const Variable& x) {
  const Variable t = tanh(log(add(exp(x), 1.0)));
  return mul(g, add(t, mul(mul(x, sigmoid(x)), rsub(mul(t, t), 1.0))));
}

// glu's backward, torch's glu_backward: [g * s(b), g * a * s(b) (1 - s(b))] along d, for
// a, b the halves of x. As an op of (g, x) whose own backward is PyTorch's
// glu_double_backward (FunctionsManual.cpp), so second derivatives keep its order of
// products (where a is infinite they are ±inf, not inf - inf).
Tensor glu_backward_t(const Tensor& g, const Tensor& x, int64_t d) {
  const int64_t h = x.size(d) / 2;
  const Tensor a = x.narrow(d, 0, h), s = sigmoid(x.narrow(d, h, h));
  return cat({mul(g, s), mul(mul(mul(rsub(s, 1.0), s), a), g)}, d);
}

Variable glu_backward_v(const Variable& g, const Variable& x, int64_t d) {
  const Tensor gd = g.data(), xd = x.data();
  return autograd::make_result(glu_backward_t(gd, xd, d), "GluBackwardBackward", {&g, &x},
                               [gd, xd, d](const Tensor& gg, const std::vector<bool>&) -> std::vector<Tensor> {
                                 const int64_t h = xd.size(d) / 2;
                                 const Tensor a = xd.narrow(d, 0, h), s = sigmoid(xd.narrow(d, h, h));
                                 const Tensor one_sub = rsub(s, 1.0), s_one_sub = mul(s, one_sub);
                                 const Tensor gga = gg.narrow(d, 0, h), ggb = gg.narrow(d, h, h);
                                 // d/dg: the transpose of the linear map g -> glu_backward(g, x).
                                 const Tensor dg = add(mul(gga, s), mul(mul(ggb, a), s_one_sub));
                                 // d/dx: glu_double_backward.
                                 const Tensor second = sub(mul(s_one_sub, one_sub), mul(s, s_one_sub));
                                 const Tensor dxa = mul(mul(ggb, gd), s_one_sub);
                                 const Tensor dxb =
                                     add(mul(mul(mul(ggb, a), gd), second), mul(mul(gga, gd), s_one_sub));
                                 return {dg, cat({dxa, dxb}, d)};
                               });
}

}  // namespace

Variable elu(const Variable& x, double alpha) {
  check_float_input(x, "elu");
  return elu_impl(x, alpha, 1.0, 1.0);
}

Variable selu(const Variable& x) {
  check_float_input(x, "selu");
  // The constants of torch.nn.SELU (Klambauer et al. 2017, eq. 14).
  return elu_impl(x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1.0);
}

Variable celu(const Variable& x, double alpha) {
  check_float_input(x, "celu");
  DDL_CHECK(alpha != 0.0, "celu: alpha cannot be 0");
  return elu_impl(x, alpha, 1.0, 1.0 / alpha);
}

Variable glu(const Variable& x, int64_t dim) {
  check_float_input(x, "glu");
  DDL_CHECK(x.dim() > 0, "glu: does not support 0-d inputs because halving size must be even");
  DDL_CHECK(dim >= -x.dim() && dim < x.dim(), "glu: dim ", dim, " out of range for a ", x.dim(), "-d input ",
            x.shape());
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  const int64_t n = x.size(d);
  DDL_CHECK(n % 2 == 0, "glu: halving dimension must be even, but dimension ", d, " is size ", n);
  return in_float32(x, [&](const Variable& v) {
    const Tensor xd = v.data();
    return autograd::make_result(
        mul(xd.narrow(d, 0, n / 2), sigmoid(xd.narrow(d, n / 2, n / 2))), "GluBackward", {&v},
        [xd, d](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
          return {glu_backward_t(g, xd, d)};
        },
        [v, d](const Variable& g, const std::vector<bool>&) -> std::vector<Variable> {
          return {glu_backward_v(g, v, d)};
        });
  });
}

Variable tanhshrink(const Variable& x) {
  DDL_CHECK(x.defined(), "tanhshrink: input is undefined");
  DDL_CHECK(x.dtype() != DType::Bool, "tanhshrink: bool inputs are not supported");
  return in_float32(x, [](const Variable& v) { return sub(v, tanh(v)); });
}

Variable logsigmoid(const Variable& x) {
  check_float_input(x, "logsigmoid");
  return in_float32(x, [](const Variable& v) { return neg(softplus_stable(neg(v))); });
}

Variable mish(const Variable& x) {
  check_float_input(x, "mish");
  return in_float32(x, [](const Variable& v) {
    const Variable c(v.data());  // no graph: the forward value only
    return autograd::make_result(
        mul(c, tanh(softplus_stable(c))).data(), "MishBackward", {&v},
        [c](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
          return {mish_grad(Variable(g), c).data()};
        },
        [v](const Variable& g, const std::vector<bool>&) -> std::vector<Variable> { return {mish_grad(g, v)}; });
  });
}

Variable softmin(const Variable& x, int64_t dim) {
  check_float_input(x, "softmin");
  const int64_t nd = std::max<int64_t>(x.dim(), 1);
  DDL_CHECK(dim >= -nd && dim < nd, "softmin: dim ", dim, " out of range for input ", x.shape());
  return softmax(neg(x), dim);
}

// torch.nn.functional.softsign is this same composition, in the input's dtype.
Variable softsign(const Variable& x) {
  DDL_CHECK(x.defined(), "softsign: input is undefined");
  DDL_CHECK(x.dtype() != DType::Bool, "softsign: bool inputs are not supported");
  return div(x, add(abs(x), 1.0));
}

Variable prelu(const Variable& x, const Variable& weight) {
  check_float_input(x, "prelu");
  DDL_CHECK(weight.defined() && weight.dtype() == x.dtype(), "prelu: weight must have the input's dtype ",
            dtype_name(x.dtype()));
  DDL_CHECK(weight.dim() <= 1, "prelu: expected weight to be 0-d or 1-d, got shape ", weight.shape());
  // As PyTorch 1.13: the channels are dim 1, and an input of fewer dims has one.
  const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
  DDL_CHECK(weight.numel() == 1 || weight.numel() == channels,
            "prelu: mismatch of parameter numbers and input channel size: weight has ", weight.numel(),
            " elements, input ", x.shape(), " has ", channels, " channels");
  std::vector<int64_t> wshape;
  if (weight.numel() != 1) {
    wshape.assign(static_cast<size_t>(x.dim() - 1), 1);
    wshape[0] = channels;
  }
  const Variable w = weight.reshape(Shape(wshape));
  if (is_reduced_float(x.dtype())) return prelu(x.to(DType::Float32), weight.to(DType::Float32)).to(x.dtype());
  // PyTorch: x > 0 ? x : w * x, for the value and both gradients (dw = x there, 0 above).
  // For NaN its double backward is 0 where this composition's d(dx)/dw would be g: there
  // x meets a constant copy of w (gradient w, no curvature) and w a constant copy of x.
  const Tensor xd = x.data(), pos = gt(xd, 0.0), neg = le(xd, 0.0);
  const Tensor nan = eq(detail::mask_or(pos, neg), 0.0);
  const Variable xn = where(neg, x, scalar_like(x, 0.0));
  const Variable y_nan = add(mul(only(nan, x), Variable(w.data())), mul(Variable(where(nan, xd, zeros_like(xd))), w));
  return where(pos, x, where(neg, mul(xn, w), y_nan));
}

Variable rrelu(const Variable& x, double lower, double upper, bool training, Generator* gen) {
  check_float_input(x, "rrelu");
  DDL_CHECK(lower <= upper, "rrelu: lower bound ", lower, " should be less than or equal to the upper bound ", upper);
  if (!training) {
    // PyTorch evaluates leaky_relu with the mean slope: x > 0 ? x : slope * x.
    const double slope = (lower + upper) / 2;
    return in_float32(x, [&](const Variable& v) { return where(gt(v.data(), 0.0), v, mul(v, slope)); });
  }
  Generator& g = gen ? *gen : default_generator();
  return in_float32(x, [&](const Variable& v) {
    // One slope per element, used where x <= 0 (NaN keeps slope 1), as rrelu_with_noise.
    const Tensor xd = v.data();
    const Tensor r = add(mul(rand(xd.shape(), g, TensorOptions(xd.dtype(), xd.device())), upper - lower), lower);
    return mul(v, Variable(where(le(xd, 0.0), r, full_like(xd, 1.0))));
  });
}

}  // namespace ddl
