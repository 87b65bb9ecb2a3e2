// Helpers shared by activation_smooth.cpp and activation_hard.cpp (not public).
#pragma once

#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/variable.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl::detail {

inline void check_float_input(const Variable& x, const char* op) {
  DDL_CHECK(x.defined(), op, ": input is undefined");
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a floating input, got ", describe(x.data()));
}

// 16-bit inputs compute in float32 and round once, as PyTorch's CPU kernels do for
// bfloat16 (float16 has none of these kernels in 1.13).
template <typename F>
Variable in_float32(const Variable& x, F f) {
  if (is_reduced_float(x.dtype())) return f(x.to(DType::Float32)).to(x.dtype());
  return f(x);
}

// A 0-d constant of x's dtype and device (no gradient).
inline Variable scalar_like(const Variable& x, double v) {
  return Variable(full({}, v, TensorOptions(x.dtype(), x.device())));
}

inline Tensor mask_not(const Tensor& a) { return eq(a, 0.0); }
inline Tensor isnan_mask(const Tensor& x) { return mask_not(eq(x, x)); }
inline Tensor mask_and(const Tensor& a, const Tensor& b) { return where(a, b, a); }
inline Tensor mask_or(const Tensor& a, const Tensor& b) { return where(a, a, b); }

// x where `keep`, 0 elsewhere: the input of a branch that `where` later discards, so
// that the discarded elements (inf, NaN) never reach the branch's backward, where
// 0 * inf would make a NaN gradient.
inline Variable only(const Tensor& keep, const Variable& x) { return where(keep, x, scalar_like(x, 0.0)); }

// y0 + (x - x0) * slope with y0, x0 and slope constants, where `keep`: value y0, gradient
// slope, no curvature. For the points where PyTorch's piecewise formulas meet (and NaN).
inline Variable linear_piece(const Tensor& keep, const Variable& x, const Tensor& y0, const Tensor& slope) {
  const Variable xk = only(keep, x);
  return add(Variable(y0), mul(sub(xk, Variable(xk.data())), Variable(slope)));
}

// Note [NaN in bfloat16 backward]
// PyTorch 1.13's float and double kernels are vectorized; its bfloat16 ones run the scalar
// loop, whose comparisons send NaN down the other branch of some backward formulas (elu,
// hardshrink, softshrink, hardswish). Each function takes the branch of the dtype's kernel.
inline bool scalar_kernel(const Variable& x) { return x.dtype() == DType::BFloat16; }

}  // namespace ddl::detail
