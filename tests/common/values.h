// Short helpers that many test files use, shared so that a suite's files can be compiled
// together (tests/meson.build): v() reads a tensor, param() makes a leaf, params() a
// convolution's geometry, ints() an int64 tensor.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops.h>

namespace ddl::test {

// A CPU tensor's elements in row-major order, as doubles.
inline std::vector<double> v(const Tensor& t) { return to_vector<double>(t); }

// A float64 leaf that requires grad.
inline Variable param(const std::vector<double>& x) { return Variable(from_vector<double>(x), true); }

// The text of autograd's error for a saved tensor changed in place.
inline constexpr const char* kModified = "has been modified by an inplace operation";

inline Conv2dParams params(std::array<int64_t, 2> stride, std::array<int64_t, 2> pad, std::array<int64_t, 2> dil,
                           int64_t groups = 1) {
  Conv2dParams p;
  p.stride = stride, p.padding = pad, p.dilation = dil, p.groups = groups;
  return p;
}

inline Tensor ints(const std::vector<int64_t>& values, const Shape& s) { return from_vector(values, s); }
inline Tensor ints(const std::vector<int64_t>& values) { return from_vector(values); }

}  // namespace ddl::test
