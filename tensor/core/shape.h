// Shape and strides of a tensor, with the helpers views and broadcasting use.
// A Shape is a list of non-negative extents; strides are counted in elements.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace ddl {

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}  // NOLINT: implicit on purpose
  template <typename It>
  Shape(It first, It last) : dims_(first, last) {}

  int64_t size() const { return static_cast<int64_t>(dims_.size()); }
  bool empty() const { return dims_.empty(); }
  int64_t operator[](int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int64_t i) { return dims_[static_cast<size_t>(i)]; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }
  int64_t front() const { return dims_.front(); }
  int64_t back() const { return dims_.back(); }
  const int64_t* data() const { return dims_.data(); }
  const std::vector<int64_t>& vec() const { return dims_; }
  void push_back(int64_t d) { dims_.push_back(d); }
  void insert(int64_t pos, int64_t d) { dims_.insert(dims_.begin() + pos, d); }
  void erase(int64_t pos) { dims_.erase(dims_.begin() + pos); }

  // Product of the extents (1 for a scalar shape); throws when it overflows int64
  // (tensor/core/checked_shape.h has the forms that name the calling op).
  int64_t numel() const;
  bool operator==(const Shape&) const = default;
  std::string str() const;

 private:
  std::vector<int64_t> dims_;
};

using Strides = Shape;
// LibTorch's name for what t.sizes() and t.strides() return: indexable, iterable, .size(), .vec(),
// and comparable with a std::vector<int64_t>.
using IntArrayRef = Shape;

std::ostream& operator<<(std::ostream& os, const Shape& s);

// Row-major strides for `shape`.
Strides contiguous_strides(const Shape& shape);

// Wraps a possibly negative dim into [0, ndim); `op` names the caller in errors.
// As PyTorch's maybe_wrap_dim, ndim 0 accepts -1 and 0 and returns 0: a caller
// given a 0-d tensor must then treat it as one element (reductions, sort) or
// refuse it (select, narrow), never index shape[0].
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// NumPy broadcasting of two shapes; throws naming `op` when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace ddl
