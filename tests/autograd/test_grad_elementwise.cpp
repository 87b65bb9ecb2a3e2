// Gradient checks of every elementwise op, with broadcasting and non-contiguous inputs.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::non_contiguous;
using ddl::test::random_double;
using V = std::vector<Variable>;

TEST_CASE("binary ops with broadcasting", "[grad][elementwise]") {
  const Tensor a = random_double({3, 4}, 1), b = random_double({4}, 2), c = random_double({3, 1}, 3, 0.5, 2.0);
  REQUIRE_GRADCHECK([](const V& x) { return x[0] + x[1]; }, {a, b});
  REQUIRE_GRADCHECK([](const V& x) { return x[0] - x[1]; }, {a, c});
  REQUIRE_GRADCHECK([](const V& x) { return x[0] * x[1]; }, {non_contiguous(a), b});
  REQUIRE_GRADCHECK([](const V& x) { return x[0] / x[1]; }, {a, c});
  REQUIRE_GRADCHECK([](const V& x) { return maximum(x[0], x[1]); }, {a, b});
  REQUIRE_GRADCHECK([](const V& x) { return minimum(x[0], x[1]); }, {a, non_contiguous(c)});
  REQUIRE_GRADCHECK([](const V& x) { return where(gt(x[0].data(), 0.0), x[0], x[1]); }, {a, b});
}

TEST_CASE("scalar forms", "[grad][elementwise]") {
  const Tensor a = random_double({2, 5}, 4);
  REQUIRE_GRADCHECK([](const V& x) { return x[0] + 2.0; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return 3.0 - x[0]; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0] * -1.5; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0] / 4.0; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return -x[0]; }, {non_contiguous(a)});
}

TEST_CASE("unary math", "[grad][elementwise]") {
  const Tensor a = random_double({3, 4}, 5);
  const Tensor pos = random_double({3, 4}, 6, 0.2, 2.0);
  REQUIRE_GRADCHECK([](const V& x) { return exp(x[0]); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return log(x[0]); }, {pos});
  REQUIRE_GRADCHECK([](const V& x) { return sqrt(x[0]); }, {non_contiguous(pos)});
  REQUIRE_GRADCHECK([](const V& x) { return rsqrt(x[0]); }, {pos});
  REQUIRE_GRADCHECK([](const V& x) { return pow(x[0], 3.0); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return pow(x[0], 0.5); }, {pos});
  REQUIRE_GRADCHECK([](const V& x) { return sigmoid(x[0]); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return tanh(x[0]); }, {non_contiguous(a)});
}

TEST_CASE("kinked ops away from their kinks", "[grad][elementwise]") {
  // Values kept at least 0.1 from 0 (relu, abs) and from the clamp bounds.
  Tensor a = random_double({4, 5}, 7, 0.1, 1.0);
  Tensor sign_flip = random_double({4, 5}, 8);
  a = where(gt(sign_flip, 0.0), a, neg(a));
  REQUIRE_GRADCHECK([](const V& x) { return relu(x[0]); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return abs(x[0]); }, {non_contiguous(a)});
  REQUIRE_GRADCHECK([](const V& x) { return clamp(x[0], -0.5, 0.5); }, {a});
}

TEST_CASE("float32 gradients agree with float64 ones", "[grad][elementwise]") {
  const Tensor a = random_double({16, 8}, 9);
  auto grad_of = [](const Tensor& t) {
    Variable x(t, true);
    sum(tanh(x) * sigmoid(x) + exp(x * 0.5)).backward();
    return x.grad().to(DType::Float64);
  };
  REQUIRE(allclose(grad_of(a.to(DType::Float32)), grad_of(a), 1e-5, 1e-6));
}

TEST_CASE("rsqrt's create_graph gradient comes from the output, as PyTorch's", "[grad][elementwise]") {
  // torch: x = [-inf, 4, 0]: grad of rsqrt(x).sum() with create_graph = [nan, -0.0625, -inf],
  // and its own gradient [nan, 0.0234375, inf].
  const Variable x(from_vector<double>({-std::numeric_limits<double>::infinity(), 4.0, 0.0}), true);
  const Variable g = autograd::grad({sum(rsqrt(x))}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  const auto gv = to_vector<double>(g.data());
  REQUIRE(std::isnan(gv[0]));
  REQUIRE(gv[1] == -0.0625);
  REQUIRE(gv[2] == -std::numeric_limits<double>::infinity());
  const auto g2 = to_vector<double>(autograd::grad({sum(g)}, {x})[0].data());
  REQUIRE(std::isnan(g2[0]));
  REQUIRE(g2[1] == 0.0234375);
  REQUIRE(g2[2] == std::numeric_limits<double>::infinity());
}

TEST_CASE("gelu of float16 computes in float32: its double backward is no NaN at |x| = 300", "[grad][elementwise]") {
  // torch (float32 from the float16 values, rounded to float16): gelu'' at 300 and -300 is
  // phi(x) (2 - x^2) = -0.0, at 1 0.2419 and at -0.5 0.6162; float16's x^2 = inf gave NaN.
  const Variable x(from_vector<double>({300.0, -300.0, 1.0, -0.5}).to(DType::Float16), true);
  const Variable g = autograd::grad({sum(gelu(x, "none"))}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  REQUIRE(g.dtype() == DType::Float16);
  const Variable g2 = autograd::grad({sum(g)}, {x})[0];
  REQUIRE(g2.dtype() == DType::Float16);
  const auto v = to_vector<double>(g2.data().to(DType::Float64));
  REQUIRE(v[0] == 0.0);
  REQUIRE(v[1] == 0.0);
  REQUIRE(v[2] == Approx(0.2419).epsilon(2e-3));
  REQUIRE(v[3] == Approx(0.6162).epsilon(2e-3));
}
