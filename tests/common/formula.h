// Tensors from flat-index formulas, as the golden scripts (tests/golden/*.py) build their
// inputs, and an element-wise comparison of a tensor with expected values through Catch's
// Approx (tol both absolute and relative). Shapes and dtypes only; no autograd.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <vector>

#include <ddl/tensor/ops.h>

namespace ddl::test {

// f(i) for the i-th element in row-major order.
inline Tensor formula(const Shape& shape, const std::function<double(int64_t)>& f, DType dtype = DType::Float64) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<int64_t>(i));
  return from_vector(v, shape).to(dtype);
}

inline void require_all_close(const Tensor& t, const std::vector<double>& expected, double tol) {
  const std::vector<double> got = to_vector<double>(t);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(expected[i]).margin(tol).epsilon(tol));
  }
}

}  // namespace ddl::test
