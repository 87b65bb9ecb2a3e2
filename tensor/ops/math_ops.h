// Elementwise math beyond elementwise.h, as PyTorch's: trigonometric and hyperbolic functions,
// log1p and expm1, softplus, rounding (floor, ceil, round, trunc, frac), atan2, fmod and remainder,
// lerp, clamp by tensors, pow of tensors and of a scalar base, div with a rounding mode and a scalar
// divided by a tensor. Integer and bool inputs of the float functions give
// float32; binary ops broadcast and promote as elementwise.h's. NaN and inf follow <cmath>, as
// PyTorch's CPU kernels; 16-bit floats compute in float32 and round once.
#pragma once

#include <optional>
#include <string_view>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tan(const Tensor& a);
Tensor asin(const Tensor& a);
Tensor acos(const Tensor& a);
Tensor atan(const Tensor& a);
Tensor sinh(const Tensor& a);
Tensor cosh(const Tensor& a);
Tensor asinh(const Tensor& a);
Tensor acosh(const Tensor& a);
Tensor atanh(const Tensor& a);
Tensor log1p(const Tensor& a);  // log(1 + a), exact for small a
Tensor expm1(const Tensor& a);  // exp(a) - 1, exact for small a
// torch.nn.functional.softplus: log(1 + exp(beta a)) / beta, or a where beta a > threshold.
// Floating a only (PyTorch has no integer kernel).
Tensor softplus(const Tensor& a, double beta = 1.0, double threshold = 20.0);

// torch.floor, ceil and trunc: NaN, inf and -0.0 stay; integer tensors come back as copies, bools
// are refused (as PyTorch's CPU kernels).
Tensor floor(const Tensor& a);
Tensor ceil(const Tensor& a);
Tensor trunc(const Tensor& a);
// torch.round: ties to even (0.5 -> 0, 2.5 -> 2). With decimals d, as PyTorch 1.13's kernel in the
// dtype's compute type: nearbyint(a * 10^d) / 10^d, or nearbyint(a / 10^-d) * 10^-d for d < 0. Then
// floats only, and not float16 (PyTorch 1.13 has no such CPU kernel).
Tensor round(const Tensor& a, int64_t decimals = 0);
// a - trunc(a), the sign of a (frac(-1.5) = -0.5, frac(inf) = NaN); floating a only.
Tensor frac(const Tensor& a);

// atan2(a, b): the angle of the point (b, a); integers and bools give float32.
Tensor atan2(const Tensor& a, const Tensor& b);
// C's fmod: a - trunc(a / b) * b, the sign of a. Integers stay integers and refuse a zero divisor.
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, double b);
// Python's a % b: a - floor(a / b) * b, the sign of b. Integers as fmod.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, double b);
// torch.remainder(number, tensor): the dtype of b with a Python number (Note [Scalar operands]).
Tensor remainder(double a, const Tensor& b);
// start + weight * (end - start), computed as PyTorch's lerp (exact at weight 0 and 1). start, end
// (and a tensor weight) must share a floating dtype, as there; all three broadcast.
Tensor lerp(const Tensor& start, const Tensor& end, double weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
// torch.clamp with tensor bounds (broadcast, promoted): a NaN in x or in either bound gives NaN;
// where lo > hi the result is hi. With one bound it is maximum(a, lo) or minimum(a, hi).
Tensor clamp(const Tensor& a, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi);
Tensor clamp_min(const Tensor& a, double lo);
Tensor clamp_min(const Tensor& a, const Tensor& lo);
Tensor clamp_max(const Tensor& a, double hi);
Tensor clamp_max(const Tensor& a, const Tensor& hi);
// a ^ b elementwise, broadcast and promoted as torch.pow(tensor, tensor): integers stay integers (a
// negative power gives 0 unless the base is 1 or -1), two bools are refused.
Tensor pow(const Tensor& a, const Tensor& b);
// base ^ exponent, as torch.pow(number, tensor): integer exponents with an integral base stay
// integers (a negative power gives 0 unless the base is 1 or -1).
Tensor pow(double base, const Tensor& exponent);
// a / b with a number on the left, as Python's 2 / t: true division (integers give float32).
Tensor operator/(double a, const Tensor& b);
// torch.div(a, b, rounding_mode): std::nullopt is true division (div in elementwise.h); "trunc"
// rounds the quotient toward zero, "floor" down (Python's //). With a rounding mode integers stay
// integers and refuse a zero divisor, bools are refused; any other mode is an error.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& a, double b, std::optional<std::string_view> rounding_mode);

namespace detail {
// torch.div(a, b, rounding_mode="trunc" / "floor") of floats: the gradients of fmod and remainder.
Tensor div_trunc(const Tensor& a, const Tensor& b);
Tensor div_floor(const Tensor& a, const Tensor& b);
}  // namespace detail

}  // namespace ddl
