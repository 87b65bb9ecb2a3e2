// Differentiable forms of tensor/ops/math_ops.h's ops (forward and backward in math_ops.cpp), each with a
// differentiable backward for double backward, the derivative formulas PyTorch's
// derivatives.yaml gives. Broadcast operands get their gradients summed back to their shapes.
#pragma once

#include <optional>
#include <string_view>

#include <ddl/autograd/variable.h>

namespace ddl {

Variable sin(const Variable& a);
Variable cos(const Variable& a);
Variable tan(const Variable& a);
Variable asin(const Variable& a);
Variable acos(const Variable& a);
Variable atan(const Variable& a);
Variable sinh(const Variable& a);
Variable cosh(const Variable& a);
Variable asinh(const Variable& a);
Variable acosh(const Variable& a);
Variable atanh(const Variable& a);
Variable log1p(const Variable& a);
Variable expm1(const Variable& a);
Variable softplus(const Variable& a, double beta = 1.0, double threshold = 20.0);
// Rounding has a zero gradient almost everywhere (PyTorch's zeros_like(grad)); frac's is the identity.
Variable floor(const Variable& a);
Variable ceil(const Variable& a);
Variable round(const Variable& a, int64_t decimals = 0);
Variable trunc(const Variable& a);
Variable frac(const Variable& a);
Variable sign(const Variable& a);

Variable atan2(const Variable& a, const Variable& b);
// The gradient of b is -g * trunc(a / b) (fmod) or -g * floor(a / b) (remainder), as PyTorch's.
Variable fmod(const Variable& a, const Variable& b);
Variable fmod(const Variable& a, double b);
Variable remainder(const Variable& a, const Variable& b);
Variable remainder(const Variable& a, double b);
// PyTorch 1.13 has no derivative for remainder(number, tensor): backward through it throws, as there.
Variable remainder(double a, const Variable& b);
Variable lerp(const Variable& start, const Variable& end, double weight);
Variable lerp(const Variable& start, const Variable& end, const Variable& weight);
// The gradient goes to x where lo <= x <= hi, to lo where x < lo < hi, to hi where x > hi or hi < lo.
Variable clamp(const Variable& a, const std::optional<Variable>& lo, const std::optional<Variable>& hi);
Variable clamp_min(const Variable& a, double lo);
Variable clamp_min(const Variable& a, const Variable& lo);
Variable clamp_max(const Variable& a, double hi);
Variable clamp_max(const Variable& a, const Variable& hi);
// d/da = g b a^(b-1) (0 where b = 0), d/db = g a^b log(a) (0 where a = 0 and b >= 0), as PyTorch's
// pow_backward_self and pow_backward_exponent.
Variable pow(const Variable& a, const Variable& b);
Variable pow(double base, const Variable& exponent);
Variable operator/(double a, const Variable& b);
// With a rounding mode the gradients are g * 0 (NaN where g is not finite), as PyTorch's.
Variable div(const Variable& a, const Variable& b, std::optional<std::string_view> rounding_mode);
Variable div(const Variable& a, double b, std::optional<std::string_view> rounding_mode);

}  // namespace ddl
