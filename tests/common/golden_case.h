// PyTorch golden-value cases for differentiable ops (tests/golden/*.py): inputs
// rebuilt from closed-form sequences, forward values compared element by element
// and each input gradient through one checksum, for the cotangent seq(y, 0.9, 0.1).
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/golden_seq.h"  // seq, checksum
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

namespace ddl::test {

// Runs f on float64 leaves that require grad, checks shape and values against
// PyTorch's, backpropagates seq(y.shape, 0.9, 0.1) and checks each gradient's checksum.
inline void check_golden(const std::function<Variable(const std::vector<Variable>&)>& f,
                         const std::vector<Tensor>& inputs, const Shape& shape, const std::vector<double>& y_expected,
                         const std::vector<double>& grad_checksums) {
  std::vector<Variable> xs;
  for (const Tensor& t : inputs) xs.emplace_back(t.clone(), true);
  const Variable y = f(xs);
  REQUIRE(y.shape() == shape);
  const std::vector<double> yv = to_vector<double>(y.data());
  REQUIRE(yv.size() == y_expected.size());
  for (size_t i = 0; i < yv.size(); ++i) {
    INFO("element " << i);
    REQUIRE(yv[i] == Approx(y_expected[i]).margin(1e-10));
  }
  y.backward(seq(y.shape(), 0.9, 0.1).to(y.dtype()));
  REQUIRE(grad_checksums.size() == xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("gradient of input " << i);
    REQUIRE(xs[i].grad().defined());
    REQUIRE(checksum(xs[i].grad()) == Approx(grad_checksums[i]).margin(1e-9));
  }
}

}  // namespace ddl::test
