// tensor/ops/math_ops.h's ops on Variables: forward and backward side by side, each backward written once
// as a generic formula that serves the Tensor backward and the Variable one (double backward,
// Note [Double backward]). The formulas are PyTorch's (tools/autograd/derivatives.yaml).
#include <cmath>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/math_ops.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/elementwise_impl.h>
#include <ddl/tensor/ops/math_ops.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using autograd::make_result;
using Grads = std::vector<Tensor>;
using VGrads = std::vector<Variable>;
using Needs = std::vector<bool>;

namespace {

// A unary op whose gradient f(g, x) is written once over Tensors and Variables. 16-bit inputs
// compute forward and backward in float32 (the forward's bits are the Tensor op's: float32, rounded
// once), so a backward formula does not overflow where PyTorch's float32 reference does not.
template <typename F>
Variable unary(const Variable& a, Tensor (*forward)(const Tensor&), const char* node, F f) {
  if (is_reduced_float(a.dtype())) return unary(a.to(DType::Float32), forward, node, f).to(a.dtype());
  const Tensor ad = a.data();
  return make_result(
      forward(ad), node, {&a}, [ad, f](const Tensor& g, const Needs&) -> Grads { return {f(g, ad)}; },
      [a, f](const Variable& g, const Needs&) -> VGrads { return {f(g, a)}; });
}

template <typename G>
G zero_like(const G& g) {
  return G(zeros({}, TensorOptions(g.dtype(), g.device())));
}

// fmod and remainder: d/da = 1, d/db = -q with q = trunc(a / b) or floor(a / b), a constant.
Variable modulo(const Variable& a, const Variable& b, const Tensor& y, bool floor, const char* node) {
  const Tensor ad = a.data(), bd = b.data();
  const Shape as = a.shape(), bs = b.shape();
  auto q = [ad, bd, floor] { return floor ? detail::div_floor(ad, bd) : detail::div_trunc(ad, bd); };
  return make_result(
      y, node, {&a, &b},
      [q, as, bs](const Tensor& g, const Needs& n) -> Grads {
        return {n[0] ? sum_to(g, as) : Tensor(), n[1] ? sum_to(neg(mul(g, q())), bs) : Tensor()};
      },
      [q, as, bs](const Variable& g, const Needs& n) -> VGrads {
        return {n[0] ? sum_to(g, as) : Variable(), n[1] ? sum_to(neg(mul(g, Variable(q()))), bs) : Variable()};
      });
}

Variable identity_grad(const Variable& a, const Tensor& y, const char* node) {
  return make_result(
      y, node, {&a}, [](const Tensor& g, const Needs&) -> Grads { return {g}; },
      [](const Variable& g, const Needs&) -> VGrads { return {g}; });
}

// Rounding ops: the gradient is zeros_like(grad), a constant, as PyTorch's derivatives.yaml.
Variable zero_grad(const Variable& a, const Tensor& y, const char* node) {
  auto zeros_of = [](const auto& g) {
    using G = std::decay_t<decltype(g)>;
    return G(zeros(g.shape(), TensorOptions(g.dtype(), g.device())));
  };
  return make_result(
      y, node, {&a}, [zeros_of](const Tensor& g, const Needs&) -> Grads { return {zeros_of(g)}; },
      [zeros_of](const Variable& g, const Needs&) -> VGrads { return {zeros_of(g)}; });
}

// clamp by tensors; masks are constants of the inputs (PyTorch's clamp_backward and
// clamp_backward_min_max).
Variable clamp_vars(const Variable& a, const std::optional<Variable>& lo, const std::optional<Variable>& hi,
                    const Tensor& y) {
  const Tensor x = a.data();
  const Tensor l = lo ? lo->data() : Tensor(), h = hi ? hi->data() : Tensor();
  Tensor pass_x, pass_lo, pass_hi;  // bool masks
  if (l.defined() && h.defined()) {
    pass_x = mul(ge(x, l), le(x, h));
    pass_lo = mul(lt(x, l), lt(l, h));
    pass_hi = maximum(gt(x, h), lt(h, l));
  } else if (l.defined()) {
    pass_x = ge(x, l);
    pass_lo = lt(x, l);
  } else {
    pass_x = le(x, h);
    pass_hi = gt(x, h);
  }
  const Shape xs = a.shape(), ls = lo ? lo->shape() : Shape(), hs = hi ? hi->shape() : Shape();
  auto grads = [=](const auto& g, const Needs& n) {
    using G = std::decay_t<decltype(g)>;
    const G z = zero_like(g);
    auto part = [&](size_t i, const Tensor& mask, const Shape& s) {
      return i < n.size() && n[i] && mask.defined() ? sum_to(where(mask, g, z), s) : G();
    };
    std::vector<G> r = {part(0, pass_x, xs)};
    if (lo) r.push_back(part(1, pass_lo, ls));
    if (hi) r.push_back(part(r.size(), pass_hi, hs));
    return r;
  };
  std::vector<const Variable*> inputs = {&a};
  if (lo) inputs.push_back(&*lo);
  if (hi) inputs.push_back(&*hi);
  return make_result(
      y, "ClampBackward", inputs, [grads](const Tensor& g, const Needs& n) -> Grads { return grads(g, n); },
      [grads](const Variable& g, const Needs& n) -> VGrads { return grads(g, n); });
}

}  // namespace

Variable sin(const Variable& a) {
  return unary(a, sin, "SinBackward", [](const auto& g, const auto& x) { return mul(g, cos(x)); });
}
Variable cos(const Variable& a) {
  return unary(a, cos, "CosBackward", [](const auto& g, const auto& x) { return mul(g, neg(sin(x))); });
}
Variable tan(const Variable& a) {
  // 1 + tan(x)^2, from the result as PyTorch's.
  return unary(a, tan, "TanBackward", [](const auto& g, const auto& x) { return mul(g, add(pow(tan(x), 2.0), 1.0)); });
}
Variable asin(const Variable& a) {
  return unary(a, asin, "AsinBackward",
               [](const auto& g, const auto& x) { return mul(g, rsqrt(rsub(mul(x, x), 1.0))); });
}
Variable acos(const Variable& a) {
  return unary(a, acos, "AcosBackward",
               [](const auto& g, const auto& x) { return mul(g, neg(rsqrt(rsub(mul(x, x), 1.0)))); });
}
Variable atan(const Variable& a) {
  return unary(a, atan, "AtanBackward", [](const auto& g, const auto& x) { return div(g, add(mul(x, x), 1.0)); });
}
Variable sinh(const Variable& a) {
  return unary(a, sinh, "SinhBackward", [](const auto& g, const auto& x) { return mul(g, cosh(x)); });
}
Variable cosh(const Variable& a) {
  return unary(a, cosh, "CoshBackward", [](const auto& g, const auto& x) { return mul(g, sinh(x)); });
}
Variable asinh(const Variable& a) {
  return unary(a, asinh, "AsinhBackward",
               [](const auto& g, const auto& x) { return mul(g, rsqrt(add(pow(x, 2.0), 1.0))); });
}
// (x * x - 1)^-1/2 with x * x, as PyTorch's formula: pow(x, 2) would differ in the second derivative at 3e38.
Variable acosh(const Variable& a) {
  return unary(a, acosh, "AcoshBackward",
               [](const auto& g, const auto& x) { return mul(g, rsqrt(sub(mul(x, x), 1.0))); });
}
Variable atanh(const Variable& a) {
  return unary(a, atanh, "AtanhBackward", [](const auto& g, const auto& x) { return div(g, rsub(pow(x, 2.0), 1.0)); });
}
Variable log1p(const Variable& a) {
  return unary(a, log1p, "Log1pBackward", [](const auto& g, const auto& x) { return div(g, add(x, 1.0)); });
}
Variable expm1(const Variable& a) {
  return unary(a, expm1, "Expm1Backward", [](const auto& g, const auto& x) { return mul(g, add(expm1(x), 1.0)); });
}

Variable softplus(const Variable& a, double beta, double threshold) {
  DDL_CHECK(a.defined(), "softplus: undefined operand");
  if (is_reduced_float(a.dtype())) return softplus(a.to(DType::Float32), beta, threshold).to(a.dtype());  // as unary()
  const Tensor ad = a.data();
  const Tensor y = softplus(ad, beta, threshold);
  // d/dx = sigmoid(beta x) below the threshold, 1 above it (where the forward is x itself).
  const Tensor above = gt(mul(ad, beta), threshold);
  return make_result(
      y, "SoftplusBackward", {&a},
      [ad, above, beta](const Tensor& g, const Needs&) -> Grads {
        const Tensor z = exp(mul(ad, beta));  // as PyTorch's softplus_backward: g z / (z + 1)
        return {where(above, g, div(mul(g, z), add(z, 1.0)))};
      },
      [a, above, beta](const Variable& g, const Needs&) -> VGrads {
        return {where(above, g, mul(g, sigmoid(mul(a, beta))))};
      });
}

Variable floor(const Variable& a) { return zero_grad(a, floor(a.data()), "FloorBackward"); }
Variable ceil(const Variable& a) { return zero_grad(a, ceil(a.data()), "CeilBackward"); }
Variable round(const Variable& a, int64_t decimals) { return zero_grad(a, round(a.data(), decimals), "RoundBackward"); }
Variable trunc(const Variable& a) { return zero_grad(a, trunc(a.data()), "TruncBackward"); }
Variable frac(const Variable& a) { return identity_grad(a, frac(a.data()), "FracBackward"); }
Variable sign(const Variable& a) { return zero_grad(a, sign(a.data()), "SignBackward"); }

Variable atan2(const Variable& a, const Variable& b) {
  DDL_CHECK(a.defined() && b.defined(), "atan2: undefined operand");
  const DType t = detail::result_type(a.data(), b.data());
  if (is_reduced_float(t)) return atan2(a.to(DType::Float32), b.to(DType::Float32)).to(t);  // as unary()
  const Shape as = a.shape(), bs = b.shape();
  auto grads = [as, bs](const auto& g, const auto& x, const auto& y, const Needs& n) {
    using G = std::decay_t<decltype(g)>;
    const auto recip = pow(add(mul(x, x), mul(y, y)), -1.0);
    return std::vector<G>{n[0] ? sum_to(mul(mul(g, y), recip), as) : G(),
                          n[1] ? sum_to(neg(mul(mul(g, x), recip)), bs) : G()};
  };
  const Tensor ad = a.data(), bd = b.data();
  return make_result(
      atan2(ad, bd), "Atan2Backward", {&a, &b},
      [grads, ad, bd](const Tensor& g, const Needs& n) -> Grads { return grads(g, ad, bd, n); },
      [grads, a, b](const Variable& g, const Needs& n) -> VGrads { return grads(g, a, b, n); });
}

Variable fmod(const Variable& a, const Variable& b) {
  return modulo(a, b, fmod(a.data(), b.data()), false, "FmodBackward");
}
Variable fmod(const Variable& a, double b) { return identity_grad(a, fmod(a.data(), b), "FmodBackward"); }
Variable remainder(const Variable& a, const Variable& b) {
  return modulo(a, b, remainder(a.data(), b.data()), true, "RemainderBackward");
}
Variable remainder(const Variable& a, double b) {
  return identity_grad(a, remainder(a.data(), b), "RemainderBackward");
}

// PyTorch 1.13 defines no derivative of remainder(number, tensor) (derivatives.yaml has
// no entry), so its backward refuses, and ddl's refuses with it.
[[noreturn]] static void refuse_remainder_number_grad() {
  detail::throw_error(__FILE__, __LINE__,
                      "remainder: the derivative of remainder(number, tensor) is not defined (PyTorch 1.13 "
                      "refuses it too)");
}

Variable remainder(double a, const Variable& b) {
  return make_result(
      remainder(a, b.data()), "RemainderBackward", {&b},
      [](const Tensor&, const Needs&) -> Grads { refuse_remainder_number_grad(); },
      [](const Variable&, const Needs&) -> VGrads { refuse_remainder_number_grad(); });
}

Variable lerp(const Variable& start, const Variable& end, double weight) {
  const Shape ss = start.shape(), es = end.shape();
  auto grads = [ss, es, weight](const auto& g, const Needs& n) {
    using G = std::decay_t<decltype(g)>;
    return std::vector<G>{n[0] ? sum_to(mul(g, 1.0 - weight), ss) : G(), n[1] ? sum_to(mul(g, weight), es) : G()};
  };
  return make_result(
      lerp(start.data(), end.data(), weight), "LerpBackward", {&start, &end},
      [grads](const Tensor& g, const Needs& n) -> Grads { return grads(g, n); },
      [grads](const Variable& g, const Needs& n) -> VGrads { return grads(g, n); });
}

Variable lerp(const Variable& start, const Variable& end, const Variable& weight) {
  const Shape ss = start.shape(), es = end.shape(), ws = weight.shape();
  auto grads = [ss, es, ws](const auto& g, const auto& s, const auto& e, const auto& w, const Needs& n) {
    using G = std::decay_t<decltype(g)>;
    return std::vector<G>{n[0] ? sum_to(mul(g, rsub(w, 1.0)), ss) : G(), n[1] ? sum_to(mul(g, w), es) : G(),
                          n[2] ? sum_to(mul(g, sub(e, s)), ws) : G()};
  };
  const Tensor sd = start.data(), ed = end.data(), wd = weight.data();
  return make_result(
      lerp(sd, ed, wd), "LerpBackward", {&start, &end, &weight},
      [grads, sd, ed, wd](const Tensor& g, const Needs& n) -> Grads { return grads(g, sd, ed, wd, n); },
      [grads, start, end, weight](const Variable& g, const Needs& n) -> VGrads {
        return grads(g, start, end, weight, n);
      });
}

Variable clamp(const Variable& a, const std::optional<Variable>& lo, const std::optional<Variable>& hi) {
  DDL_CHECK(a.defined(), "clamp: undefined operand");
  const std::optional<Tensor> l = lo ? std::optional<Tensor>(lo->data()) : std::nullopt;
  const std::optional<Tensor> h = hi ? std::optional<Tensor>(hi->data()) : std::nullopt;
  return clamp_vars(a, lo, hi, clamp(a.data(), l, h));
}
Variable clamp_min(const Variable& a, double lo) { return clamp(a, std::optional<double>(lo), std::nullopt); }
Variable clamp_min(const Variable& a, const Variable& lo) {
  return clamp_vars(a, lo, std::nullopt, clamp_min(a.data(), lo.data()));
}
Variable clamp_max(const Variable& a, double hi) { return clamp(a, std::nullopt, std::optional<double>(hi)); }
Variable clamp_max(const Variable& a, const Variable& hi) {
  return clamp_vars(a, std::nullopt, hi, clamp_max(a.data(), hi.data()));
}

Variable pow(const Variable& a, const Variable& b) {
  DDL_CHECK(a.defined() && b.defined(), "pow: undefined operand");
  const DType t = detail::result_type(a.data(), b.data());
  if (is_reduced_float(t)) return pow(a.to(DType::Float32), b.to(DType::Float32)).to(t);  // as unary()
  const Shape as = a.shape(), bs = b.shape();
  const Tensor ad = a.data(), bd = b.data();
  const Tensor y = pow(ad, bd);
  // Masks of the inputs, constants: where b = 0, and where a = 0 with b >= 0.
  const Tensor b_zero = eq(bd, 0.0), a_zero = mul(eq(ad, 0.0), ge(bd, 0.0));
  // As PyTorch's formulas, g inside the base's mask and outside the exponent's: their double
  // backward then gives the same NaNs (0 * log(0)). The log is of the base in the result's dtype.
  auto grads = [as, bs, b_zero, a_zero, t](const auto& g, const auto& x, const auto& e, const auto& r, const Needs& n) {
    using G = std::decay_t<decltype(g)>;
    const G z = zero_like(g);
    return std::vector<G>{n[0] ? sum_to(where(b_zero, z, mul(g, mul(e, pow(x, sub(e, 1.0))))), as) : G(),
                          n[1] ? sum_to(mul(g, where(a_zero, z, mul(r, log(x.to(t))))), bs) : G()};
  };
  return make_result(
      y, "PowBackward", {&a, &b},
      [grads, ad, bd, y](const Tensor& g, const Needs& n) -> Grads { return grads(g, ad, bd, y, n); },
      [grads, a, b](const Variable& g, const Needs& n) -> VGrads { return grads(g, a, b, pow(a, b), n); });
}

Variable pow(double base, const Variable& exponent) {
  const Tensor ed = exponent.data();
  // g * base^e * log(base); at base 0, 0 where e >= 0 (PyTorch's pow_backward_exponent).
  auto grad = [base, ed](const auto& g, const auto& y) {
    using G = std::decay_t<decltype(g)>;
    const G slope = mul(y, std::log(base));
    return mul(g, base == 0 ? where(ge(ed, 0.0), zero_like(g), slope) : slope);
  };
  return make_result(
      pow(base, ed), "PowBackward", {&exponent},
      [grad, base, ed](const Tensor& g, const Needs&) -> Grads { return {grad(g, pow(base, ed))}; },
      [grad, base, exponent](const Variable& g, const Needs&) -> VGrads { return {grad(g, pow(base, exponent))}; });
}

Variable operator/(double a, const Variable& b) {
  DDL_CHECK(b.defined(), "div: undefined operand");
  const DType t = is_floating(b.dtype()) ? b.dtype() : DType::Float32;
  return div(Variable(scalar_tensor(a, TensorOptions(t, b.device()))), t == b.dtype() ? b : Variable(b.data().to(t)));
}

}  // namespace ddl

namespace ddl {

Variable div(const Variable& a, const Variable& b, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return div(a, b);
  const Shape as = a.shape(), bs = b.shape();
  auto grads = [as, bs](const auto& g, const Needs& n) {
    using G = std::decay_t<decltype(g)>;
    return std::vector<G>{n[0] ? sum_to(mul(g, 0.0), as) : G(), n[1] ? sum_to(mul(g, 0.0), bs) : G()};
  };
  return make_result(
      div(a.data(), b.data(), rounding_mode), "DivBackward", {&a, &b},
      [grads](const Tensor& g, const Needs& n) -> Grads { return grads(g, n); },
      [grads](const Variable& g, const Needs& n) -> VGrads { return grads(g, n); });
}

Variable div(const Variable& a, double b, std::optional<std::string_view> rounding_mode) {
  if (!rounding_mode) return div(a, b);
  return make_result(
      div(a.data(), b, rounding_mode), "DivBackward", {&a},
      [](const Tensor& g, const Needs&) -> Grads { return {mul(g, 0.0)}; },
      [](const Variable& g, const Needs&) -> VGrads { return {mul(g, 0.0)}; });
}

}  // namespace ddl
