// Gradient checking against central finite differences (see tests/README.md).
// For f and float64 inputs, draws a random cotangent c, and compares the
// gradient of sum(f(x) * c) from one backward call with the central
// difference (L(x + eps) - L(x - eps)) / 2eps at every input element.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

namespace ddl::test {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-6;
  double rtol = 1e-4;
  uint64_t seed = 1234;
  // Inputs at these indices get no gradient checked (e.g. integer targets).
  std::vector<size_t> skip_inputs = {};
};

using VariableFn = std::function<Variable(const std::vector<Variable>&)>;

// Returns "" when analytic and numeric gradients agree, otherwise a description
// of the first mismatch (input, element, both values).
std::string gradcheck(const VariableFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& opts = {});

// A float64 tensor of `shape` with values uniform in [lo, hi).
Tensor random_double(const Shape& shape, uint64_t seed, double lo = -1.0, double hi = 1.0);
// The same values as `t` but laid out non-contiguously (a transposed copy viewed back).
Tensor non_contiguous(const Tensor& t);

}  // namespace ddl::test

#define REQUIRE_GRADCHECK(...)                                       \
  do {                                                               \
    const std::string gc_msg_ = ::ddl::test::gradcheck(__VA_ARGS__); \
    INFO(gc_msg_);                                                   \
    REQUIRE(gc_msg_.empty());                                        \
  } while (0)
