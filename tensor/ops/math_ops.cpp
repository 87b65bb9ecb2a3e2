// Frontends of tensor/ops/math_ops.h: each reaches the shared elementwise machinery (elementwise_impl.h)
// with its functor (functors.h), or composes elementwise.h's ops where PyTorch's formula does.
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/elementwise_impl.h>
#include <ddl/tensor/ops/math_ops.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using detail::binary_op;
using detail::unary_op;

namespace {

// v as a 0-d tensor of dtype t (an integer one wraps, as PyTorch converts a Python int).
Tensor scalar_of(double v, DType t, Device device) {
  if (is_floating(t)) return scalar_tensor(v, TensorOptions(t, device));
  return scalar_tensor(v, TensorOptions(DType::Int64, device)).to(t);
}

// PyTorch's integer fmod and remainder raise ZeroDivisionError; a float divisor of 0 gives NaN.
void check_int_divisor(const Tensor& b, DType t, const char* name) {
  if (is_floating(t) || b.numel() == 0) return;
  DDL_CHECK(sum(eq(b, 0.0).to(DType::Int64)).item() == 0, name, ": integer division by zero (divisor ", describe(b),
            ")");
}

Tensor modulo(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  DDL_CHECK(a.defined() && b.defined(), name, ": undefined operand");
  const DType t = detail::result_type(a, b);
  DDL_CHECK(t != DType::Bool, name, ": not supported for bool tensors (", describe(a), ", ", describe(b),
            "); convert them with .to(DType::Int64)");
  check_int_divisor(b, t, name);
  return binary_op(op, a, b, name);
}

Tensor modulo(BinaryOp op, const Tensor& a, double b, const char* name) {
  DDL_CHECK(a.defined(), name, ": undefined operand");
  const DType t = detail::scalar_result_type(a.dtype(), b);
  DDL_CHECK(is_floating(t) || b != 0, name, ": integer division by zero (", describe(a), " by ", b, ")");
  return binary_op(op, a.dtype() == t ? a : a.to(t), scalar_of(b, t, a.device()), name);
}

// torch.result_type of several tensors: dimensioned operands first, a 0-d one counting only when
// of a higher category (See Note [0-d operands] in elementwise.cpp).
DType result_type(const std::vector<Tensor>& ts) {
  std::optional<DType> dimensioned, zero_dim;
  for (const Tensor& t : ts) {
    auto& r = t.dim() > 0 ? dimensioned : zero_dim;
    r = r ? promote_types(*r, t.dtype()) : t.dtype();
  }
  if (!dimensioned) return *zero_dim;
  if (!zero_dim) return *dimensioned;
  auto category = [](DType t) { return t == DType::Bool ? 0 : is_floating(t) ? 2 : 1; };
  return category(*zero_dim) > category(*dimensioned) ? promote_types(*dimensioned, *zero_dim) : *dimensioned;
}

void check_lerp_operand(const Tensor& start, const Tensor& t, const char* what) {
  DDL_CHECK(t.defined(), "lerp: undefined ", what);
  DDL_CHECK(t.device() == start.device(), "lerp: ", what, " on another device (", describe(start), " and ", describe(t),
            ")");
  DDL_CHECK(t.dtype() == start.dtype(), "lerp: expected dtype ", start.dtype(), " for `", what, "` but got dtype ",
            t.dtype(), "; convert it with .to()");
}

// PyTorch 1.13's lerp: start + w (end - start) for w < 0.5, else end - (end - start)(1 - w), so the
// result is exactly start at w = 0 and exactly end at w = 1 (the test is w < 0.5, not |w| < 0.5: it
// decides which infinities cancel at a huge negative w).
template <typename W>
Tensor lerp_impl(const Tensor& start, const Tensor& end, const W& weight) {
  DDL_CHECK(start.defined(), "lerp: undefined start");
  check_lerp_operand(start, end, "end");
  if constexpr (std::is_same_v<W, Tensor>) check_lerp_operand(start, weight, "weight");
  DDL_CHECK(is_floating(start.dtype()), "lerp: expected floating tensors, got ", describe(start),
            "; convert them with .to(DType::Float32)");
  const Shape shape = broadcast_shapes(start.shape(), end.shape(), "lerp");
  if constexpr (std::is_same_v<W, Tensor>) broadcast_shapes(shape, weight.shape(), "lerp");
  if (is_reduced_float(start.dtype())) {  // in float32, rounded once
    if constexpr (std::is_same_v<W, Tensor>)
      return lerp_impl(start.to(DType::Float32), end.to(DType::Float32), weight.to(DType::Float32)).to(start.dtype());
    else
      return lerp_impl(start.to(DType::Float32), end.to(DType::Float32), weight).to(start.dtype());
  }
  const Tensor d = sub(end, start);
  if constexpr (std::is_same_v<W, Tensor>) {
    const Tensor small = lt(weight, 0.5);
    return where(small, add(start, mul(weight, d)), sub(end, mul(d, rsub(weight, 1.0))));
  } else {
    return weight < 0.5 ? add(start, mul(d, weight)) : sub(end, mul(d, 1.0 - weight));
  }
}

// floor, ceil, round and trunc: integers are already whole (a copy, as PyTorch), bools refused.
Tensor rounding(UnaryOp op, const Tensor& a, const char* name, double scale = 0, double direction = 0) {
  DDL_CHECK(a.defined(), name, ": undefined operand");
  DDL_CHECK(a.dtype() != DType::Bool, name, ": not supported for bool tensors (", describe(a),
            "); convert it with .to(DType::Float32)");
  if (!is_floating(a.dtype())) return a.clone();
  return unary_op(op, a, name, scale, direction);
}

// The rounding mode of torch.div: BinaryOp::Div, DivTrunc or DivFloor.
BinaryOp div_mode(const std::optional<std::string_view>& mode) {
  if (!mode) return BinaryOp::Div;
  DDL_CHECK(*mode == "trunc" || *mode == "floor",
            "div: expected rounding_mode to be one of std::nullopt, \"trunc\" or \"floor\", but got \"", *mode, "\"");
  return *mode == "trunc" ? BinaryOp::DivTrunc : BinaryOp::DivFloor;
}

// clamp by tensors: minimum(maximum(a, lo), hi) in the dtype of all three, NaN from any of them.
Tensor clamp_tensors(const Tensor& a, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
                     const char* name) {
  DDL_CHECK(a.defined(), name, ": undefined operand");
  DDL_CHECK(lo || hi, name, ": at least one of min and max must be given");
  std::vector<Tensor> ts = {a};
  Shape shape = a.shape();
  for (const auto* bound : {&lo, &hi}) {
    if (!*bound) continue;
    const Tensor& b = **bound;
    DDL_CHECK(b.defined(), name, ": undefined bound");
    DDL_CHECK(b.device() == a.device(), name, ": bound on another device (", describe(a), " and ", describe(b), ")");
    shape = broadcast_shapes(shape, b.shape(), name);
    ts.push_back(b);
  }
  const DType t = result_type(ts);
  // As PyTorch: two bounds have no bool kernel; one bound is maximum or minimum, which has.
  DDL_CHECK(t != DType::Bool || !(lo && hi), name, ": not supported for bool tensors (", describe(a),
            "); convert with .to(DType::Int64)");
  Tensor r = a.to(t);
  if (lo) r = binary_op(BinaryOp::Maximum, r, lo->to(t), name);
  if (hi) r = binary_op(BinaryOp::Minimum, r, hi->to(t), name);
  return r;
}

}  // namespace

Tensor sin(const Tensor& a) { return unary_op(UnaryOp::Sin, a, "sin"); }
Tensor cos(const Tensor& a) { return unary_op(UnaryOp::Cos, a, "cos"); }
Tensor tan(const Tensor& a) { return unary_op(UnaryOp::Tan, a, "tan"); }
Tensor asin(const Tensor& a) { return unary_op(UnaryOp::Asin, a, "asin"); }
Tensor acos(const Tensor& a) { return unary_op(UnaryOp::Acos, a, "acos"); }
Tensor atan(const Tensor& a) { return unary_op(UnaryOp::Atan, a, "atan"); }
Tensor sinh(const Tensor& a) { return unary_op(UnaryOp::Sinh, a, "sinh"); }
Tensor cosh(const Tensor& a) { return unary_op(UnaryOp::Cosh, a, "cosh"); }
Tensor asinh(const Tensor& a) { return unary_op(UnaryOp::Asinh, a, "asinh"); }
Tensor acosh(const Tensor& a) { return unary_op(UnaryOp::Acosh, a, "acosh"); }
Tensor atanh(const Tensor& a) { return unary_op(UnaryOp::Atanh, a, "atanh"); }
Tensor log1p(const Tensor& a) { return unary_op(UnaryOp::Log1p, a, "log1p"); }
Tensor expm1(const Tensor& a) { return unary_op(UnaryOp::Expm1, a, "expm1"); }

Tensor softplus(const Tensor& a, double beta, double threshold) {
  DDL_CHECK(a.defined(), "softplus: undefined operand");
  DDL_CHECK(is_floating(a.dtype()), "softplus: expected a floating tensor, got ", describe(a),
            "; convert it with .to(DType::Float32)");
  return unary_op(UnaryOp::Softplus, a, "softplus", beta, threshold);
}

Tensor floor(const Tensor& a) { return rounding(UnaryOp::Floor, a, "floor"); }
Tensor ceil(const Tensor& a) { return rounding(UnaryOp::Ceil, a, "ceil"); }
Tensor trunc(const Tensor& a) { return rounding(UnaryOp::Trunc, a, "trunc"); }

Tensor round(const Tensor& a, int64_t decimals) {
  if (decimals == 0) return rounding(UnaryOp::Round, a, "round");
  DDL_CHECK(a.defined(), "round: undefined operand");
  DDL_CHECK(is_floating(a.dtype()), "round: decimals is not supported for ", describe(a),
            " (PyTorch has no integer kernel); convert it with .to(DType::Float32)");
  // 10^|decimals| as std::pow gives it; past 10^308 it is inf, and so is the scaled value.
  const double scale = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  if (a.dtype() == DType::BFloat16) {
    // PyTorch 1.13's CPU kernel computes in bfloat16: the scaled value rounds to bfloat16 before
    // nearbyint (-1856 at -2 decimals: -18.5, then -1800), the rest in float32.
    const Tensor s = scalar_of(scale, DType::BFloat16, a.device());
    const Tensor scaled = (decimals > 0 ? mul(a, s) : div(a, s)).to(DType::Float32);
    const Tensor r = unary_op(UnaryOp::Round, scaled, "round"), s32 = s.to(DType::Float32);
    return (decimals > 0 ? div(r, s32) : mul(r, s32)).to(DType::BFloat16);
  }
  return unary_op(UnaryOp::Round, a, "round", scale, decimals > 0 ? 1.0 : -1.0);
}

Tensor frac(const Tensor& a) {
  DDL_CHECK(a.defined(), "frac: undefined operand");
  DDL_CHECK(is_floating(a.dtype()), "frac: expected a floating tensor, got ", describe(a),
            "; convert it with .to(DType::Float32)");
  return unary_op(UnaryOp::Frac, a, "frac");
}

Tensor atan2(const Tensor& a, const Tensor& b) {
  DDL_CHECK(a.defined() && b.defined(), "atan2: undefined operand");
  if (!is_floating(a.dtype()) && !is_floating(b.dtype()))
    return binary_op(BinaryOp::Atan2, a.to(DType::Float32), b.to(DType::Float32), "atan2");
  return binary_op(BinaryOp::Atan2, a, b, "atan2");
}

Tensor fmod(const Tensor& a, const Tensor& b) { return modulo(BinaryOp::Fmod, a, b, "fmod"); }
Tensor fmod(const Tensor& a, double b) { return modulo(BinaryOp::Fmod, a, b, "fmod"); }
Tensor remainder(const Tensor& a, const Tensor& b) { return modulo(BinaryOp::Remainder, a, b, "remainder"); }
Tensor remainder(const Tensor& a, double b) { return modulo(BinaryOp::Remainder, a, b, "remainder"); }
Tensor remainder(double a, const Tensor& b) {
  DDL_CHECK(b.defined(), "remainder: undefined operand");
  const DType t = detail::scalar_result_type(b.dtype(), a);
  return modulo(BinaryOp::Remainder, scalar_of(a, t, b.device()), b.to(t), "remainder");
}

Tensor lerp(const Tensor& start, const Tensor& end, double weight) { return lerp_impl(start, end, weight); }
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) { return lerp_impl(start, end, weight); }

Tensor clamp(const Tensor& a, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) {
  return clamp_tensors(a, lo, hi, "clamp");
}
Tensor clamp_min(const Tensor& a, double lo) { return clamp(a, std::optional<double>(lo), std::nullopt); }
Tensor clamp_min(const Tensor& a, const Tensor& lo) { return clamp_tensors(a, lo, std::nullopt, "clamp_min"); }
Tensor clamp_max(const Tensor& a, double hi) { return clamp(a, std::nullopt, std::optional<double>(hi)); }
Tensor clamp_max(const Tensor& a, const Tensor& hi) { return clamp_tensors(a, std::nullopt, hi, "clamp_max"); }

Tensor pow(const Tensor& a, const Tensor& b) {
  DDL_CHECK(a.defined() && b.defined(), "pow: undefined operand");
  DDL_CHECK(detail::result_type(a, b) != DType::Bool, "pow: not supported for two bool tensors (", describe(a), ", ",
            describe(b), "); convert them with .to(DType::Int64)");
  return binary_op(BinaryOp::Pow, a, b, "pow");
}

Tensor pow(double base, const Tensor& exponent) {
  DDL_CHECK(exponent.defined(), "pow: undefined exponent");
  // The dtype of torch.pow(number, tensor): the tensor's if floating, else as Note [Scalar operands].
  const DType t = detail::scalar_result_type(exponent.dtype(), base);
  return binary_op(BinaryOp::Pow, scalar_of(base, t, exponent.device()), exponent.to(t), "pow");
}

Tensor operator/(double a, const Tensor& b) {
  DDL_CHECK(b.defined(), "div: undefined operand");
  const DType t = is_floating(b.dtype()) ? b.dtype() : DType::Float32;
  return div(scalar_of(a, t, b.device()), b.to(t));
}

// PyTorch 1.13's CPU div_trunc of a 16-bit float truncates the quotient rounded to 16 bits (Half's
// operator/: 183.9 rounds to 184 first); its div_floor computes in float32, as ddl's kernels do.
Tensor div_trunc_reduced(const Tensor& a, const Tensor& b) {
  const DType t = detail::result_type(a, b);
  return trunc(div(a.to(t), b.to(t)));
}

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  const BinaryOp op = div_mode(rounding_mode);
  if (op == BinaryOp::Div) return div(a, b);
  DDL_CHECK(a.defined() && b.defined(), "div: undefined operand");
  if (op == BinaryOp::DivTrunc && is_reduced_float(detail::result_type(a, b))) return div_trunc_reduced(a, b);
  return modulo(op, a, b, "div");
}

Tensor div(const Tensor& a, double b, std::optional<std::string_view> rounding_mode) {
  const BinaryOp op = div_mode(rounding_mode);
  if (op == BinaryOp::Div) return div(a, b);
  DDL_CHECK(a.defined(), "div: undefined operand");
  if (op == BinaryOp::DivTrunc && is_reduced_float(a.dtype()))
    return div_trunc_reduced(a, scalar_of(b, a.dtype(), a.device()));
  return modulo(op, a, b, "div");
}

namespace detail {
Tensor div_trunc(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::DivTrunc, a, b, "div"); }
Tensor div_floor(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::DivFloor, a, b, "div"); }
}  // namespace detail

}  // namespace ddl
