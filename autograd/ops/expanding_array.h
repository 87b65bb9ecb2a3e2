// ExpandingArray<N>: an argument that is one number for all N spatial dims or
// N numbers, like PyTorch's int-or-tuple arguments (LibTorch's
// torch::ExpandingArray<N>): max_pool3d(x, 2) or max_pool3d(x, {1, 2, 2}).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include <ddl/base/error.h>

namespace ddl {

template <size_t N>
class ExpandingArray {
 public:
  ExpandingArray(int64_t all) : scalar_(true) { v_.fill(all); }  // NOLINT: implicit on purpose
  ExpandingArray(std::array<int64_t, N> v) : v_(v) {}            // NOLINT: implicit on purpose
  // {k} for all dims or N numbers.
  ExpandingArray(std::initializer_list<int64_t> v) {  // NOLINT: implicit on purpose
    DDL_CHECK(v.size() == 1 || v.size() == N, "expected 1 or ", N, " numbers, got ", v.size());
    if (v.size() == 1) {
      v_.fill(*v.begin());
      scalar_ = true;
    } else {
      size_t i = 0;
      for (int64_t x : v) v_[i++] = x;
    }
  }
  int64_t operator[](size_t i) const { return v_[i]; }
  const std::array<int64_t, N>& value() const { return v_; }
  operator std::array<int64_t, N>() const { return v_; }  // NOLINT: implicit on purpose
  bool operator==(const ExpandingArray& o) const { return v_ == o.v_; }
  bool all(int64_t x) const {
    for (int64_t y : v_)
      if (y != x) return false;
    return true;
  }
  // As PyTorch prints it: "3" when given as one number, else "(3, 3, 5)".
  std::string repr() const { return scalar_ ? std::to_string(v_[0]) : tuple_repr(); }
  // Always the tuple form, as the convolutions print their sizes ("(3,)" for N = 1).
  std::string tuple_repr() const {
    std::string s = "(";
    for (size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::to_string(v_[i]);
    return s + (N == 1 ? ",)" : ")");
  }

 private:
  std::array<int64_t, N> v_{};
  bool scalar_ = false;
};

}  // namespace ddl
