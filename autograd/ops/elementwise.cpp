// Elementwise ops: forward and backward side by side. Gradients of broadcast
// operands are summed back to their shapes with sum_to.
#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using autograd::make_result;
using Grads = std::vector<Tensor>;
using VGrads = std::vector<Variable>;
using Needs = std::vector<bool>;

// Each op passes make_result a second, Variable-valued backward: the same formula in
// differentiable ops, used only for double backward. See Note [Double backward].

Variable add(const Variable& a, const Variable& b) {
  const Shape as = a.shape(), bs = b.shape();
  return make_result(
      add(a.data(), b.data()), "AddBackward", {&a, &b},
      [as, bs](const Tensor& g, const Needs& n) -> Grads {
        return {n[0] ? sum_to(g, as) : Tensor(), n[1] ? sum_to(g, bs) : Tensor()};
      },
      [as, bs](const Variable& g, const Needs& n) -> VGrads {
        return {n[0] ? sum_to(g, as) : Variable(), n[1] ? sum_to(g, bs) : Variable()};
      });
}

Variable sub(const Variable& a, const Variable& b) {
  const Shape as = a.shape(), bs = b.shape();
  return make_result(
      sub(a.data(), b.data()), "SubBackward", {&a, &b},
      [as, bs](const Tensor& g, const Needs& n) -> Grads {
        return {n[0] ? sum_to(g, as) : Tensor(), n[1] ? sum_to(neg(g), bs) : Tensor()};
      },
      [as, bs](const Variable& g, const Needs& n) -> VGrads {
        return {n[0] ? sum_to(g, as) : Variable(), n[1] ? sum_to(neg(g), bs) : Variable()};
      });
}

Variable mul(const Variable& a, const Variable& b) {
  const Tensor ad = a.data(), bd = b.data();
  return make_result(
      mul(ad, bd), "MulBackward", {&a, &b},
      [ad, bd](const Tensor& g, const Needs& n) -> Grads {
        return {n[0] ? sum_to(mul(g, bd), ad.shape()) : Tensor(), n[1] ? sum_to(mul(g, ad), bd.shape()) : Tensor()};
      },
      [a, b](const Variable& g, const Needs& n) -> VGrads {
        return {n[0] ? sum_to(mul(g, b), a.shape()) : Variable(), n[1] ? sum_to(mul(g, a), b.shape()) : Variable()};
      });
}

Variable div(const Variable& a, const Variable& b) {
  const Tensor ad = a.data(), bd = b.data();
  return make_result(
      div(ad, bd), "DivBackward", {&a, &b},
      [ad, bd](const Tensor& g, const Needs& n) -> Grads {
        // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2, taken as -g·((a/b)/b) as PyTorch does: b·b
        // underflows to 0 for |b| < 1e-19 in float32, where (a/b)/b may still be finite.
        return {n[0] ? sum_to(div(g, bd), ad.shape()) : Tensor(),
                n[1] ? sum_to(neg(mul(g, div(div(ad, bd), bd))), bd.shape()) : Tensor()};
      },
      [a, b](const Variable& g, const Needs& n) -> VGrads {
        return {n[0] ? sum_to(div(g, b), a.shape()) : Variable(),
                n[1] ? sum_to(neg(mul(g, div(div(a, b), b))), b.shape()) : Variable()};
      });
}

namespace {
// maximum/minimum as PyTorch: where(a == b, g / 2, g), zeroed where the operand loses
// outright. With a NaN there is no winner and no tie, so both operands get the whole
// gradient; a loser gets 0 even where g is inf or NaN. The masks are constants of the
// inputs: piecewise linear, zero second derivative.
Variable extremum(const Variable& a, const Variable& b, bool is_max) {
  const Tensor ad = a.data(), bd = b.data();
  Tensor out = is_max ? maximum(ad, bd) : minimum(ad, bd);
  auto grad_of = [ad, bd, is_max](const auto& g, bool for_a, const Shape& shape) {
    using G = std::decay_t<decltype(g)>;
    const Tensor loses = is_max == for_a ? lt(ad, bd) : gt(ad, bd);
    const G zero(zeros({}, TensorOptions(g.dtype(), g.device())));
    return sum_to(where(loses, zero, where(eq(ad, bd), mul(g, 0.5), g)), shape);
  };
  return make_result(
      out, is_max ? "MaximumBackward" : "MinimumBackward", {&a, &b},
      [ad, bd, grad_of](const Tensor& g, const Needs& n) -> Grads {
        return {n[0] ? grad_of(g, true, ad.shape()) : Tensor(), n[1] ? grad_of(g, false, bd.shape()) : Tensor()};
      },
      [ad, bd, grad_of](const Variable& g, const Needs& n) -> VGrads {
        return {n[0] ? grad_of(g, true, ad.shape()) : Variable(), n[1] ? grad_of(g, false, bd.shape()) : Variable()};
      });
}
}  // namespace

Variable maximum(const Variable& a, const Variable& b) { return extremum(a, b, true); }
Variable minimum(const Variable& a, const Variable& b) { return extremum(a, b, false); }

Variable add(const Variable& a, double b) {
  return make_result(
      add(a.data(), b), "AddScalarBackward", {&a}, [](const Tensor& g, const Needs&) -> Grads { return {g}; },
      [](const Variable& g, const Needs&) -> VGrads { return {g}; });
}
Variable sub(const Variable& a, double b) {
  return make_result(
      sub(a.data(), b), "SubScalarBackward", {&a}, [](const Tensor& g, const Needs&) -> Grads { return {g}; },
      [](const Variable& g, const Needs&) -> VGrads { return {g}; });
}
Variable mul(const Variable& a, double b) {
  return make_result(
      mul(a.data(), b), "MulScalarBackward", {&a}, [b](const Tensor& g, const Needs&) -> Grads { return {mul(g, b)}; },
      [b](const Variable& g, const Needs&) -> VGrads { return {mul(g, b)}; });
}
Variable div(const Variable& a, double b) {
  return make_result(
      div(a.data(), b), "DivScalarBackward", {&a}, [b](const Tensor& g, const Needs&) -> Grads { return {div(g, b)}; },
      [b](const Variable& g, const Needs&) -> VGrads { return {div(g, b)}; });
}
Variable rsub(const Variable& a, double b) {
  return make_result(
      rsub(a.data(), b), "RsubBackward", {&a}, [](const Tensor& g, const Needs&) -> Grads { return {neg(g)}; },
      [](const Variable& g, const Needs&) -> VGrads { return {neg(g)}; });
}

// pow, exp, log and rsqrt are on autocast's float32 list (their range overflows or loses
// precision in 16 bits): 16-bit inputs are widened. See Note [Autocast].
Variable pow(const Variable& a, double e) {
  if (autocast::needs_float32(a)) return pow(autocast::to_float32(a), e);
  const Tensor ad = a.data();
  return make_result(
      pow(ad, e), "PowBackward", {&a},
      [ad, e](const Tensor& g, const Needs&) -> Grads {
        if (e == 0) return {zeros_like(g)};
        return {mul(g, mul(pow(ad, e - 1), e))};
      },
      [a, e](const Variable& g, const Needs&) -> VGrads {
        if (e == 0) return {Variable(zeros_like(g.data()))};
        return {mul(g, mul(pow(a, e - 1), e))};
      });
}

Variable neg(const Variable& a) {
  return make_result(
      neg(a.data()), "NegBackward", {&a}, [](const Tensor& g, const Needs&) -> Grads { return {neg(g)}; },
      [](const Variable& g, const Needs&) -> VGrads { return {neg(g)}; });
}

Variable exp(const Variable& a) {
  if (autocast::needs_float32(a)) return exp(autocast::to_float32(a));
  const Tensor y = exp(a.data());
  return make_result(
      y, "ExpBackward", {&a}, [y](const Tensor& g, const Needs&) -> Grads { return {mul(g, y)}; },
      [a](const Variable& g, const Needs&) -> VGrads { return {mul(g, exp(a))}; });
}

Variable log(const Variable& a) {
  if (autocast::needs_float32(a)) return log(autocast::to_float32(a));
  const Tensor ad = a.data();
  return make_result(
      log(ad), "LogBackward", {&a}, [ad](const Tensor& g, const Needs&) -> Grads { return {div(g, ad)}; },
      [a](const Variable& g, const Needs&) -> VGrads { return {div(g, a)}; });
}

Variable sqrt(const Variable& a) {
  const Tensor y = sqrt(a.data());
  return make_result(
      y, "SqrtBackward", {&a}, [y](const Tensor& g, const Needs&) -> Grads { return {div(g, mul(y, 2.0))}; },
      [a](const Variable& g, const Needs&) -> VGrads { return {div(g, mul(sqrt(a), 2.0))}; });
}

Variable rsqrt(const Variable& a) {
  if (autocast::needs_float32(a)) return rsqrt(autocast::to_float32(a));
  const Tensor ad = a.data(), y = rsqrt(ad);
  return make_result(
      y, "RsqrtBackward", {&a},
      [ad, y](const Tensor& g, const Needs&) -> Grads {
        // d(x^-1/2)/dx = -x^-3/2 / 2 = -y^3 / 2
        return {mul(g, mul(pow(y, 3.0), -0.5))};
      },
      // From the output, as PyTorch: -0.5 g y^3 is NaN where y is (x < 0, x = -inf), which
      // pow(x, -1.5) is not at -inf.
      [a](const Variable& g, const Needs&) -> VGrads { return {mul(g, mul(pow(rsqrt(a), 3.0), -0.5))}; });
}

Variable abs(const Variable& a) {
  const Tensor ad = a.data();
  return make_result(
      abs(ad), "AbsBackward", {&a}, [ad](const Tensor& g, const Needs&) -> Grads { return {mul(g, sign(ad))}; },
      [ad](const Variable& g, const Needs&) -> VGrads { return {mul(g, Variable(sign(ad)))}; });
}

Variable relu(const Variable& a) {
  const Tensor ad = a.data();
  return make_result(
      relu(ad), "ReluBackward", {&a}, [ad](const Tensor& g, const Needs&) -> Grads { return {relu_backward(g, ad)}; },
      [ad](const Variable& g, const Needs&) -> VGrads {
        // relu_backward's rule as a select (a constant mask): the gradient passes unless x <= 0,
        // so also at NaN, and is 0 elsewhere even where it is inf, as PyTorch's threshold_backward.
        const Tensor pass = maximum(gt(ad, 0.0), ne(ad, ad));
        return {where(pass, g, Variable(zeros({}, TensorOptions(g.dtype(), g.device()))))};
      });
}

Variable sigmoid(const Variable& a) {
  const Tensor y = sigmoid(a.data());
  return make_result(
      y, "SigmoidBackward", {&a}, [y](const Tensor& g, const Needs&) -> Grads { return {sigmoid_backward(g, y)}; },
      [a](const Variable& g, const Needs&) -> VGrads {
        const Variable s = sigmoid(a);
        return {mul(g, mul(s, rsub(s, 1.0)))};
      });
}

Variable tanh(const Variable& a) {
  const Tensor y = tanh(a.data());
  return make_result(
      y, "TanhBackward", {&a}, [y](const Tensor& g, const Needs&) -> Grads { return {tanh_backward(g, y)}; },
      [a](const Variable& g, const Needs&) -> VGrads {
        const Variable t = tanh(a);
        return {mul(g, rsub(mul(t, t), 1.0))};
      });
}

Variable clamp(const Variable& a, double lo, double hi) {
  return clamp(a, std::optional<double>(lo), std::optional<double>(hi));
}

Variable clamp(const Variable& a, std::optional<double> lo, std::optional<double> hi) {
  const Tensor ad = a.data();
  // The gradient passes where lo <= x <= hi (a missing bound always passes) and is 0
  // elsewhere, even where it is inf or NaN (PyTorch selects, it does not multiply by a
  // mask); the mask is a constant.
  Tensor inside;  // bool; false at a NaN x or bound
  if (lo) inside = ge(ad, *lo);
  if (hi) inside = inside.defined() ? mul(inside, le(ad, *hi)) : le(ad, *hi);
  auto pass = [inside](const auto& g) {
    using G = std::decay_t<decltype(g)>;
    return inside.defined() ? where(inside, g, G(zeros({}, TensorOptions(g.dtype(), g.device())))) : g;
  };
  return make_result(
      clamp(ad, lo, hi), "ClampBackward", {&a}, [pass](const Tensor& g, const Needs&) -> Grads { return {pass(g)}; },
      [pass](const Variable& g, const Needs&) -> VGrads { return {pass(g)}; });
}

Variable where(const Tensor& cond, const Variable& a, const Variable& b) {
  const Shape as = a.shape(), bs = b.shape();
  const Tensor c = cond;
  return make_result(
      where(c, a.data(), b.data()), "WhereBackward", {&a, &b},
      [c, as, bs](const Tensor& g, const Needs& n) -> Grads {
        const Tensor z = zeros({}, TensorOptions(g.dtype(), g.device()));
        return {n[0] ? sum_to(where(c, g, z), as) : Tensor(), n[1] ? sum_to(where(c, z, g), bs) : Tensor()};
      },
      [c, as, bs](const Variable& g, const Needs& n) -> VGrads {
        const Variable z(zeros({}, TensorOptions(g.dtype(), g.device())));
        return {n[0] ? sum_to(where(c, g, z), as) : Variable(), n[1] ? sum_to(where(c, z, g), bs) : Variable()};
      });
}

Variable operator+(const Variable& a, const Variable& b) { return add(a, b); }
Variable operator-(const Variable& a, const Variable& b) { return sub(a, b); }
Variable operator*(const Variable& a, const Variable& b) { return mul(a, b); }
Variable operator/(const Variable& a, const Variable& b) { return div(a, b); }
Variable operator-(const Variable& a) { return neg(a); }
Variable operator+(const Variable& a, double b) { return add(a, b); }
Variable operator-(const Variable& a, double b) { return sub(a, b); }
Variable operator*(const Variable& a, double b) { return mul(a, b); }
Variable operator/(const Variable& a, double b) { return div(a, b); }
Variable operator+(double a, const Variable& b) { return add(b, a); }
Variable operator-(double a, const Variable& b) { return rsub(b, a); }
Variable operator*(double a, const Variable& b) { return mul(b, a); }

}  // namespace ddl
