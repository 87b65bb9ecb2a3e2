// Shape helpers: numel, printing, strides, dim wrapping, broadcasting.
#include <sstream>

#include <ddl/base/error.h>
#include <ddl/tensor/core/checked_shape.h>
#include <ddl/tensor/core/shape.h>

namespace ddl {

int64_t Shape::numel() const { return checked_numel(*this, "numel"); }

int64_t checked_numel(const Shape& shape, const char* op) {
  int64_t n = 1;
  for (int64_t d : shape)
    DDL_CHECK(!__builtin_mul_overflow(n, d, &n), op, ": shape ", shape,
              " has more elements than int64 can count (integer multiplication overflow)");
  return n;
}

int64_t checked_nbytes(const Shape& shape, size_t itemsize, const char* op) {
  int64_t bytes = 0;
  DDL_CHECK(!__builtin_mul_overflow(checked_numel(shape, op), static_cast<int64_t>(itemsize), &bytes), op,
            ": storage size of shape ", shape, " with ", itemsize, "-byte elements overflows int64");
  return bytes;
}

std::string Shape::str() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << '[';
  for (int64_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << ']';
}

Strides contiguous_strides(const Shape& shape) {
  Strides st(std::vector<int64_t>(static_cast<size_t>(shape.size()), 1));
  // Wrapping (unsigned) products: they overflow only for empty shapes such as [0, 2^32, 2^32],
  // whose numel is 0 and whose strides no one reads; PyTorch wraps them the same way.
  for (int64_t i = shape.size() - 2; i >= 0; --i)
    st[i] = static_cast<int64_t>(static_cast<uint64_t>(st[i + 1]) *
                                 static_cast<uint64_t>(std::max<int64_t>(shape[i + 1], 1)));
  return st;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  DDL_CHECK(dim >= lo && dim <= hi, op, ": dimension ", dim, " out of range for a tensor with ", ndim,
            " dims (expected ", lo, " to ", hi, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const int64_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    DDL_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", a, " and ", b, " cannot be broadcast together (dim ", i,
              ": ", da, " vs ", db, ")");
    out[static_cast<size_t>(i)] = da == 1 ? db : da;
  }
  return Shape(std::move(out));
}

}  // namespace ddl
