// argmax/argmin and comparisons on Variables: the tensor ops on .data().
#include <ddl/autograd/ops/compare.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

Tensor argmax(const Variable& x, int64_t dim, bool keepdim) { return argmax(x.data(), dim, keepdim); }
Tensor argmin(const Variable& x, int64_t dim, bool keepdim) { return argmin(x.data(), dim, keepdim); }

Tensor eq(const Variable& a, const Variable& b) { return eq(a.data(), b.data()); }
Tensor ne(const Variable& a, const Variable& b) { return ne(a.data(), b.data()); }
Tensor lt(const Variable& a, const Variable& b) { return lt(a.data(), b.data()); }
Tensor le(const Variable& a, const Variable& b) { return le(a.data(), b.data()); }
Tensor gt(const Variable& a, const Variable& b) { return gt(a.data(), b.data()); }
Tensor ge(const Variable& a, const Variable& b) { return ge(a.data(), b.data()); }
Tensor eq(const Variable& a, double b) { return eq(a.data(), b); }
Tensor ne(const Variable& a, double b) { return ne(a.data(), b); }
Tensor lt(const Variable& a, double b) { return lt(a.data(), b); }
Tensor le(const Variable& a, double b) { return le(a.data(), b); }
Tensor gt(const Variable& a, double b) { return gt(a.data(), b); }
Tensor ge(const Variable& a, double b) { return ge(a.data(), b); }

Tensor operator==(const Variable& a, const Variable& b) { return eq(a, b); }
Tensor operator!=(const Variable& a, const Variable& b) { return ne(a, b); }
Tensor operator<(const Variable& a, const Variable& b) { return lt(a, b); }
Tensor operator<=(const Variable& a, const Variable& b) { return le(a, b); }
Tensor operator>(const Variable& a, const Variable& b) { return gt(a, b); }
Tensor operator>=(const Variable& a, const Variable& b) { return ge(a, b); }
Tensor operator==(const Variable& a, double b) { return eq(a, b); }
Tensor operator!=(const Variable& a, double b) { return ne(a, b); }
Tensor operator<(const Variable& a, double b) { return lt(a, b); }
Tensor operator<=(const Variable& a, double b) { return le(a, b); }
Tensor operator>(const Variable& a, double b) { return gt(a, b); }
Tensor operator>=(const Variable& a, double b) { return ge(a, b); }
// A scalar on the left mirrors the comparison: 1 < x is x > 1.
Tensor operator==(double a, const Variable& b) { return eq(b, a); }
Tensor operator!=(double a, const Variable& b) { return ne(b, a); }
Tensor operator<(double a, const Variable& b) { return gt(b, a); }
Tensor operator<=(double a, const Variable& b) { return ge(b, a); }
Tensor operator>(double a, const Variable& b) { return lt(b, a); }
Tensor operator>=(double a, const Variable& b) { return le(b, a); }

}  // namespace ddl
