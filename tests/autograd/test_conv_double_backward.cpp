// Second derivatives of the convolutions (double backward, autograd::grad with
// create_graph) in the shapes the main double-backward tests (test_higher_order.cpp) do
// not reach: unbatched input with a bias (conv2d, conv1d, conv_transpose2d) and
// conv_transpose2d with dilation and an output_padding at or above the stride. Each first
// gradient, w.r.t. every input, is grad-checked by central differences.
#include <catch2/catch.hpp>
#include <vector>

#include "tests/common/first_grad.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::first_grad;
using test::random_double;

namespace {

// Grad-checks the first gradient of f w.r.t. each input, and that every one of them can
// be computed with create_graph in one call (as torch.autograd.grad(create_graph=True)).
void check_second_derivatives(const test::VariableFn& f, const std::vector<Tensor>& inputs) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    INFO("first gradient w.r.t. input " << k);
    REQUIRE_GRADCHECK(first_grad(f, k), inputs);
  }
  std::vector<Variable> vs;
  for (const Tensor& t : inputs) vs.emplace_back(t.clone(), true);
  const std::vector<Variable> gs = autograd::grad({sum(f(vs))}, vs, {}, std::nullopt, /*create_graph=*/true);
  for (size_t k = 0; k < gs.size(); ++k) {
    INFO("input " << k);
    REQUIRE(gs[k].shape() == inputs[k].shape());
    REQUIRE(gs[k].requires_grad());
  }
}

}  // namespace

TEST_CASE("double backward: unbatched conv2d and conv1d with a bias", "[double_backward]") {
  Conv2dParams p;
  p.padding = {1, 0};
  p.stride = {1, 2};
  check_second_derivatives([p](const std::vector<Variable>& v) { return tanh(conv2d(v[0], v[1], v[2], p)); },
                           {random_double({3, 5, 6}, 1), random_double({2, 3, 3, 2}, 2), random_double({2}, 3)});
  check_second_derivatives(
      [](const std::vector<Variable>& v) { return tanh(conv1d(v[0], v[1], v[2], /*stride=*/2, /*padding=*/1)); },
      {random_double({3, 7}, 4), random_double({2, 3, 3}, 5), random_double({2}, 6)});
  // Batched conv1d with a bias, for comparison.
  check_second_derivatives([](const std::vector<Variable>& v) { return tanh(conv1d(v[0], v[1], v[2])); },
                           {random_double({2, 3, 7}, 7), random_double({2, 3, 3}, 8), random_double({2}, 9)});
}

TEST_CASE("double backward: conv_transpose2d unbatched, dilated, large output_padding", "[double_backward]") {
  struct Case {
    const char* what;
    Shape xs;
    std::array<int64_t, 2> stride, padding, dilation, output_padding;
  };
  const Case cases[] = {
      {"unbatched with a bias", {3, 3, 4}, {2, 1}, {1, 0}, {1, 1}, {1, 0}},
      {"dilation and output_padding below the stride", {2, 3, 3, 3}, {3, 2}, {1, 1}, {2, 2}, {2, 1}},
      {"output_padding at or above the stride (below the dilation)", {2, 3, 3, 3}, {2, 1}, {1, 0}, {3, 2}, {2, 1}},
      {"unbatched, output_padding above the stride", {3, 3, 3}, {1, 2}, {0, 1}, {2, 3}, {1, 2}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Conv2dParams p;
    p.stride = c.stride, p.padding = c.padding, p.dilation = c.dilation;
    const auto op = c.output_padding;
    check_second_derivatives(
        [p, op](const std::vector<Variable>& v) { return tanh(conv_transpose2d(v[0], v[1], v[2], p, op)); },
        {random_double(c.xs, 10), random_double({3, 2, 3, 3}, 11), random_double({2}, 12)});
  }
}
