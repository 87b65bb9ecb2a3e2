// Size2: a layer argument that is one number for both spatial dims or a
// {height, width} pair, like PyTorch's int-or-tuple arguments (LibTorch's
// ExpandingArray<2>): Conv2d(Conv2dOptions(3, 8, {3, 5}).stride({1, 2})) or Conv2d(3, 8, 3).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace ddl::nn {

class Size2 {
 public:
  Size2(int64_t both) : v_{both, both}, scalar_(true) {}  // NOLINT: implicit on purpose
  Size2(int64_t h, int64_t w) : v_{h, w}, scalar_(false) {}
  Size2(std::array<int64_t, 2> hw) : v_(hw), scalar_(false) {}  // NOLINT: implicit on purpose

  int64_t operator[](size_t i) const { return v_[i]; }
  const std::array<int64_t, 2>& value() const { return v_; }
  operator std::array<int64_t, 2>() const { return v_; }  // NOLINT: implicit on purpose
  bool operator==(const Size2& o) const { return v_ == o.v_; }
  bool all(int64_t x) const { return v_[0] == x && v_[1] == x; }
  // As PyTorch prints it: "3" when given as one number, else "(3, 5)".
  std::string repr() const {
    return scalar_ ? std::to_string(v_[0]) : "(" + std::to_string(v_[0]) + ", " + std::to_string(v_[1]) + ")";
  }
  // Always the pair form, as Conv2d prints its sizes.
  std::string pair_repr() const { return "(" + std::to_string(v_[0]) + ", " + std::to_string(v_[1]) + ")"; }

 private:
  std::array<int64_t, 2> v_;
  bool scalar_;
};

}  // namespace ddl::nn
