// batch_norm, layer_norm and group_norm on empty inputs and their errors, as PyTorch
// 1.13 has them: an empty batch (or empty normalised dims) gives an empty output, zero
// weight and bias gradients and untouched running statistics; exactly one value per
// channel in training is refused; every error names the op the user called.
#include <catch2/catch.hpp>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {

// Runs f(x, w, b) on leaves that require grad, backpropagates ones and checks the output
// shape, that x's gradient has x's shape, and that w's and b's gradients are zeros.
template <typename F>
void check_empty(const Shape& xs, int64_t channels, const F& f) {
  INFO("x " << xs);
  Variable x(zeros(xs), true), w(ones({channels}), true), b(zeros({channels}), true);
  const Variable y = f(x, w, b);
  REQUIRE(y.shape() == xs);
  y.backward(ones(xs));
  REQUIRE(x.grad().shape() == xs);
  CHECK(to_vector<float>(w.grad()) == std::vector<float>(size_t(channels), 0.0f));
  CHECK(to_vector<float>(b.grad()) == std::vector<float>(size_t(channels), 0.0f));
}

}  // namespace

TEST_CASE("batch_norm: an empty batch gives an empty output and leaves the running stats", "[batch_norm]") {
  for (const Shape& xs : {Shape{0, 3}, Shape{0, 3, 4}, Shape{2, 3, 0}}) {
    for (bool training : {true, false}) {
      INFO("training " << training);
      const Tensor rm = full({3}, 0.5), rv = full({3}, 2.0);
      check_empty(xs, 3, [&](const Variable& x, const Variable& w, const Variable& b) {
        return batch_norm(x, w, b, rm, rv, training);
      });
      CHECK(to_vector<float>(rm) == std::vector<float>(3, 0.5f));
      CHECK(to_vector<float>(rv) == std::vector<float>(3, 2.0f));
    }
  }
  // No channels, no affine parameters.
  const Variable y = batch_norm(Variable(zeros({2, 0, 4})), Variable(), Variable(), Tensor(), Tensor(), true);
  CHECK(y.shape() == Shape{2, 0, 4});
  // One value per channel has no batch variance: refused, as PyTorch does.
  REQUIRE_THROWS_WITH(batch_norm(Variable(zeros({1, 3, 1})), Variable(), Variable(), Tensor(), Tensor(), true),
                      Catch::Contains("batch_norm: expected more than 1 value per channel when training"));
}

TEST_CASE("layer_norm and group_norm: empty inputs give empty outputs", "[layer_norm]") {
  check_empty({0, 4}, 4,
              [](const Variable& x, const Variable& w, const Variable& b) { return layer_norm(x, {4}, w, b); });
  check_empty({0, 4, 3}, 4,
              [](const Variable& x, const Variable& w, const Variable& b) { return group_norm(x, 2, w, b); });
  check_empty({0, 4}, 4,
              [](const Variable& x, const Variable& w, const Variable& b) { return group_norm(x, 4, w, b); });
  // Empty normalised dims.
  const Variable e = layer_norm(Variable(zeros({2, 0}), true), {0}, Variable(), Variable());
  CHECK(e.shape() == Shape{2, 0});
  CHECK(group_norm(Variable(zeros({2, 0, 3})), 1, Variable(), Variable()).shape() == Shape{2, 0, 3});
  CHECK(group_norm(Variable(zeros({2, 4, 0})), 2, Variable(), Variable()).shape() == Shape{2, 4, 0});
}

TEST_CASE("layer_norm and group_norm: errors name the op", "[layer_norm][errors]") {
  REQUIRE_THROWS_WITH(layer_norm(Variable(ones({2, 4}, DType::Int64)), {4}, Variable(), Variable()),
                      Catch::StartsWith("layer_norm: ") && Catch::Contains("int64"));
  REQUIRE_THROWS_WITH(group_norm(Variable(ones({2, 4, 3}, DType::Int64)), 2, Variable(), Variable()),
                      Catch::StartsWith("group_norm: ") && Catch::Contains("int64"));
  REQUIRE_THROWS_WITH(layer_norm(Variable(ones({2, 4})), Shape{}, Variable(), Variable()),
                      Catch::StartsWith("layer_norm: "));
}
