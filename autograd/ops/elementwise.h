// Differentiable elementwise ops on Variables (forward and backward in elementwise.cpp).
// Broadcasting works as for tensors; gradients are summed back to each input's shape.
#pragma once

#include <optional>

#include <ddl/autograd/variable.h>

namespace ddl {

Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
Variable mul(const Variable& a, const Variable& b);
Variable div(const Variable& a, const Variable& b);
Variable maximum(const Variable& a, const Variable& b);
Variable minimum(const Variable& a, const Variable& b);
Variable add(const Variable& a, double b);
Variable sub(const Variable& a, double b);
Variable mul(const Variable& a, double b);
Variable div(const Variable& a, double b);
Variable rsub(const Variable& a, double b);  // b - a
Variable pow(const Variable& a, double exponent);
Variable neg(const Variable& a);
Variable exp(const Variable& a);
Variable log(const Variable& a);
Variable sqrt(const Variable& a);
Variable rsqrt(const Variable& a);
Variable abs(const Variable& a);
Variable relu(const Variable& a);
Variable sigmoid(const Variable& a);
Variable tanh(const Variable& a);
Variable clamp(const Variable& a, double lo, double hi);
Variable clamp(const Variable& a, std::optional<double> lo, std::optional<double> hi);  // one-sided
// cond is a plain tensor (no gradient flows into it).
Variable where(const Tensor& cond, const Variable& a, const Variable& b);

Variable operator+(const Variable& a, const Variable& b);
Variable operator-(const Variable& a, const Variable& b);
Variable operator*(const Variable& a, const Variable& b);
Variable operator/(const Variable& a, const Variable& b);
Variable operator-(const Variable& a);
Variable operator+(const Variable& a, double b);
Variable operator-(const Variable& a, double b);
Variable operator*(const Variable& a, double b);
Variable operator/(const Variable& a, double b);
Variable operator+(double a, const Variable& b);
Variable operator-(double a, const Variable& b);
Variable operator*(double a, const Variable& b);

}  // namespace ddl
