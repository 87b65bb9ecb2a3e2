// Elementwise ops with NumPy/PyTorch broadcasting. Tensor-tensor ops promote
// dtypes as torch.result_type (int64 + float32 -> float32; a 0-d operand counts only
// when of a higher category: Note [0-d operands]); comparisons return bool tensors; add, mul,
// maximum and minimum of two bools give a bool, and sub refuses bools, as PyTorch.
// A double scalar acts as a Python int when integral, else as a Python float
// (int64 tensor + 0.5 -> float32): Note [Scalar operands] in elementwise.cpp.
// In-place forms are Tensor methods (tensor.h); they refuse a result they cannot hold.
#pragma once

#include <optional>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);  // a + alpha * b
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

Tensor add(const Tensor& a, double b);
Tensor sub(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
Tensor rsub(const Tensor& a, double b);  // b - a
Tensor pow(const Tensor& a, double exponent);

Tensor neg(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor sign(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor erf(const Tensor& a);  // the Gauss error function, for exact GELU
// min(max(a, lo), hi) as torch.clamp: NaN stays NaN, lo > hi gives hi, a NaN bound gives NaN;
// an integer tensor with a non-integral bound gives float32.
Tensor clamp(const Tensor& a, double lo, double hi);
// One-sided when a bound is std::nullopt (torch.clamp(x, min=None, max=...)); a lone NaN bound is ignored, as there.
Tensor clamp(const Tensor& a, std::optional<double> lo, std::optional<double> hi);

Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor gt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);
// cond ? a : b, broadcasting all three; cond is bool (or uint8, nonzero = true, as PyTorch 1.13 still takes).
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// Fused backward helpers used by autograd: one pass instead of two.
Tensor relu_backward(const Tensor& grad, const Tensor& input);      // grad * (input > 0)
Tensor sigmoid_backward(const Tensor& grad, const Tensor& output);  // grad * y * (1 - y)
Tensor tanh_backward(const Tensor& grad, const Tensor& output);     // grad * (1 - y^2)

// torch.allclose: a and b broadcast (else it throws), and every pair is equal or
// |a - b| <= atol + rtol * |b| with |a - b| finite; NaNs match only with equal_nan.
// Operands of different dtypes are refused, as PyTorch.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);

}  // namespace ddl
