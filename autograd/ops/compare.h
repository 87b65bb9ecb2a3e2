// Non-differentiable ops on Variables, so callers need not reach for .data():
// argmax/argmin and comparisons. They return plain Tensors (int64 indices, bool
// masks), which carry no gradient, as in LibTorch where such results never
// require grad. Operators ==, !=, <, <=, >, >= compare elementwise.
#pragma once

#include <ddl/autograd/variable.h>

namespace ddl {

Tensor argmax(const Variable& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Variable& x, int64_t dim, bool keepdim = false);

Tensor eq(const Variable& a, const Variable& b);
Tensor ne(const Variable& a, const Variable& b);
Tensor lt(const Variable& a, const Variable& b);
Tensor le(const Variable& a, const Variable& b);
Tensor gt(const Variable& a, const Variable& b);
Tensor ge(const Variable& a, const Variable& b);
Tensor eq(const Variable& a, double b);
Tensor ne(const Variable& a, double b);
Tensor lt(const Variable& a, double b);
Tensor le(const Variable& a, double b);
Tensor gt(const Variable& a, double b);
Tensor ge(const Variable& a, double b);

// Elementwise comparisons giving bool tensors (not a bool: `if (a == b)` does not compile).
Tensor operator==(const Variable& a, const Variable& b);
Tensor operator!=(const Variable& a, const Variable& b);
Tensor operator<(const Variable& a, const Variable& b);
Tensor operator<=(const Variable& a, const Variable& b);
Tensor operator>(const Variable& a, const Variable& b);
Tensor operator>=(const Variable& a, const Variable& b);
Tensor operator==(const Variable& a, double b);
Tensor operator!=(const Variable& a, double b);
Tensor operator<(const Variable& a, double b);
Tensor operator<=(const Variable& a, double b);
Tensor operator>(const Variable& a, double b);
Tensor operator>=(const Variable& a, double b);
Tensor operator==(double a, const Variable& b);
Tensor operator!=(double a, const Variable& b);
Tensor operator<(double a, const Variable& b);
Tensor operator<=(double a, const Variable& b);
Tensor operator>(double a, const Variable& b);
Tensor operator>=(double a, const Variable& b);

}  // namespace ddl
