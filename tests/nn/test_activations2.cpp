// The activations of autograd/ops/activation_more.h and their modules (nn/activation_more.h):
// finite-difference gradient checks (first and second order), PyTorch 1.13's gradients at the
// kinks, RReLU's random slopes, PReLU's parameter and the reshaping modules. Values against
// PyTorch are the reference sweep's (tests/reference/rows_activations.cpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <sstream>

#include "tests/common/first_grad.h"
#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
using test::random_double;
using Fn = std::function<Variable(const Variable&)>;

namespace {

std::vector<std::pair<std::string, Fn>> unary_fns() {
  return {
      {"elu", [](const Variable& x) { return elu(x, 0.7); }},
      {"selu", [](const Variable& x) { return selu(x); }},
      {"celu", [](const Variable& x) { return celu(x, 1.5); }},
      {"glu", [](const Variable& x) { return glu(x, 1); }},
      {"hardtanh", [](const Variable& x) { return hardtanh(x, -0.5, 2.0); }},
      {"relu6", [](const Variable& x) { return relu6(x * 3.0); }},
      {"hardshrink", [](const Variable& x) { return hardshrink(x, 0.5); }},
      {"softshrink", [](const Variable& x) { return softshrink(x, 0.5); }},
      {"tanhshrink", [](const Variable& x) { return tanhshrink(x); }},
      {"threshold", [](const Variable& x) { return threshold(x, 0.1, 2.0); }},
      {"rrelu eval", [](const Variable& x) { return rrelu(x, 0.1, 0.3, false); }},
      {"logsigmoid", [](const Variable& x) { return logsigmoid(x); }},
      {"softmin", [](const Variable& x) { return softmin(x, 1); }},
      {"softsign", [](const Variable& x) { return softsign(x); }},
      {"mish", [](const Variable& x) { return mish(x); }},
      {"hardswish", [](const Variable& x) { return hardswish(x); }},
      {"hardsigmoid", [](const Variable& x) { return hardsigmoid(x); }},
      {"pixel_shuffle",
       [](const Variable& x) {
         return pixel_shuffle(x.reshape({1, 4, 2, 3}), 2);
       }},
      {"pixel_unshuffle",
       [](const Variable& x) {
         return pixel_unshuffle(x.reshape({1, 1, 4, 6}), 2);
       }},
  };
}

// d f(x) / dx at the points of `xs`, one backward call.
std::vector<double> grad_at(const Fn& f, const std::vector<double>& xs) {
  Variable x(from_vector(xs), true);
  f(x).sum().backward();
  return to_vector<double>(x.grad());
}

}  // namespace

TEST_CASE("the activations pass first- and second-order gradient checks", "[nn][activation][gradcheck]") {
  const Tensor x = random_double({4, 6}, 41, -4, 4);
  for (const auto& [name, f] : unary_fns()) {
    INFO(name);
    const test::VariableFn g = [f = f](const std::vector<Variable>& v) { return f(v[0]); };
    REQUIRE_GRADCHECK(g, {x});
    // A piecewise-linear function's gradient does not depend on x (no graph to check).
    static const std::set<std::string> curved = {"elu",        "selu",    "celu",     "glu",  "tanhshrink",
                                                 "logsigmoid", "softmin", "softsign", "mish", "hardswish"};
    if (curved.count(name)) REQUIRE_GRADCHECK(test::first_grad(g, 0), {x});
  }
  // The large-input branches of mish's softplus and of logsigmoid.
  const Tensor big = random_double({2, 5}, 42, 15, 30);
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return mish(v[0]); }, {big});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return logsigmoid(neg(v[0])); }, {big});
}

TEST_CASE("prelu's gradients reach the input and the per-channel weight", "[nn][activation][gradcheck]") {
  const test::VariableFn f = [](const std::vector<Variable>& v) { return prelu(v[0], v[1]); };
  const Tensor x = random_double({2, 3, 4}, 43, -2, 2), w = random_double({3}, 44, -1, 1);
  REQUIRE_GRADCHECK(f, {x, w});
  REQUIRE_GRADCHECK(test::first_grad(f, 0), {x, w});
  REQUIRE_GRADCHECK(test::first_grad(f, 1), {x, w});
  REQUIRE_GRADCHECK(f, {random_double({5}, 45, -2, 2), random_double({1}, 46)});
}

TEST_CASE("gradients at the kinks are PyTorch 1.13's", "[nn][activation]") {
  // Each from torch.autograd.grad on the same points.
  CHECK(grad_at([](const Variable& x) { return hardtanh(x); }, {-1, 1, 0.5}) == std::vector<double>{0, 0, 1});
  CHECK(grad_at([](const Variable& x) { return relu6(x); }, {0, 6, 3}) == std::vector<double>{0, 0, 1});
  CHECK(grad_at([](const Variable& x) { return hardswish(x); }, {-3, 3, 0}) == std::vector<double>{-0.5, 1.5, 0.5});
  CHECK(grad_at([](const Variable& x) { return elu(x, 0.5); }, {0.0, -0.0}) == std::vector<double>{0.5, 0.5});
  CHECK(grad_at([](const Variable& x) { return hardshrink(x); }, {-0.5, 0.5, 0.6}) == std::vector<double>{0, 0, 1});
  CHECK(grad_at([](const Variable& x) { return softshrink(x); }, {-0.5, 0.5, 0.6}) == std::vector<double>{0, 0, 1});
  CHECK(grad_at([](const Variable& x) { return threshold(x, 1.0, 5.0); }, {1, 1.5}) == std::vector<double>{0, 1});
  CHECK(grad_at([](const Variable& x) { return logsigmoid(x); }, {0})[0] == 0.5);
  CHECK(grad_at([](const Variable& x) { return prelu(x, Variable(full({1}, 0.25, DType::Float64))); }, {0})[0] == 0.25);
  // hardsigmoid's slope is PyTorch's float constant 1.0f / 6.0f, also in float64.
  CHECK(grad_at([](const Variable& x) { return hardsigmoid(x); }, {0, 3})[0] == static_cast<double>(1.0f / 6.0f));
  // NaN: hardtanh passes no gradient, elu the exponential branch's NaN.
  const double nan = std::nan("");
  CHECK(grad_at([](const Variable& x) { return hardtanh(x); }, {nan})[0] == 0.0);
  CHECK(std::isnan(grad_at([](const Variable& x) { return elu(x); }, {nan})[0]));
}

TEST_CASE("rrelu draws slopes in [lower, upper] in training and uses their mean in eval", "[nn][activation]") {
  const double lower = 0.1, upper = 0.3;
  const int64_t n = 20000;
  const Tensor xs = cat({full({n}, -2.0, DType::Float64), full({4}, 1.5, DType::Float64)}, 0);
  Generator gen(7);
  Variable x(xs, true);
  const Variable y = rrelu(x, lower, upper, true, &gen);
  y.sum().backward();
  const std::vector<double> yv = to_vector<double>(y.data()), gv = to_vector<double>(x.grad());
  double mean = 0, var = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double slope = yv[i] / -2.0;
    REQUIRE(slope >= lower);
    REQUIRE(slope <= upper);
    REQUIRE(gv[i] == slope);  // the gradient is the element's own slope
    mean += slope / n;
  }
  for (int64_t i = 0; i < n; ++i) var += std::pow(yv[i] / -2.0 - mean, 2) / n;
  // U(0.1, 0.3): mean 0.2, variance 0.2^2 / 12; 5 standard errors.
  CHECK(std::abs(mean - 0.2) < 5 * std::sqrt(0.04 / 12 / n));
  CHECK(var == Approx(0.04 / 12).epsilon(0.05));
  for (int64_t i = n; i < n + 4; ++i) CHECK((yv[i] == 1.5 && gv[i] == 1.0));
  // The same generator state gives the same slopes; eval is leaky_relu with the mean slope.
  Generator a(9), b(9);
  CHECK(equal(rrelu(Variable(xs), lower, upper, true, &a).data(), rrelu(Variable(xs), lower, upper, true, &b).data()));
  const std::vector<double> e = to_vector<double>(rrelu(Variable(from_vector<double>({-2, 0, 3})), 0.1, 0.3).data());
  CHECK(e == std::vector<double>{-2 * 0.2, 0, 3});
  RReLU m(lower, upper, &gen);
  m.eval();
  CHECK(to_vector<double>(m(Variable(from_vector<double>({-1}))).data())[0] == Approx(-0.2));
  REQUIRE_THROWS_WITH(rrelu(x, 0.5, 0.1), Catch::Contains("rrelu"));
}

TEST_CASE("PReLU registers 'weight' as PyTorch's state_dict names it", "[nn][activation]") {
  PReLU m(3);
  const auto params = m.named_parameters();
  REQUIRE(params.size() == 1);
  CHECK(params[0].first == "weight");
  CHECK(params[0].second.shape() == Shape{3});
  CHECK(to_vector<float>(params[0].second.data()) == std::vector<float>{0.25f, 0.25f, 0.25f});
  const Variable x(from_vector<float>({-4, 2, -8, 1, -1, -2}).reshape({2, 3}));
  m(x).sum().backward();
  CHECK(to_vector<float>(m.weight.grad()) == std::vector<float>{-4, -1, -10});
  auto copy = clone(m);
  CHECK(copy->named_parameters()[0].first == "weight");
  CHECK(PReLU(1, 0.1).weight.shape() == Shape{1});
  REQUIRE_THROWS_WITH(m(Variable(zeros({2, 4}))), Catch::Contains("prelu"));
  REQUIRE_THROWS_WITH(PReLU(0), Catch::Contains("PReLU"));
}

TEST_CASE("the activation modules call their functions and check their arguments", "[nn][activation]") {
  const Variable x(random_double({3, 4}, 47, -4, 4));
  auto same = [&](Module& m, const Variable& want) { return equal(m.forward(x).data(), want.data()); };
  ELU elu_m(0.5);
  CELU celu_m(2.0);
  GLU glu_m(1);
  Hardtanh ht(-2, 2);
  Threshold th(0.5, -1);
  Softmin sm(0);
  CHECK(same(elu_m, elu(x, 0.5)));
  CHECK(same(celu_m, celu(x, 2.0)));
  CHECK(same(glu_m, glu(x, 1)));
  CHECK(same(ht, hardtanh(x, -2, 2)));
  CHECK(same(th, threshold(x, 0.5, -1)));
  CHECK(same(sm, softmin(x, 0)));
  Mish mish_m;
  Hardswish hs;
  SELU selu_m;
  CHECK(same(mish_m, mish(x)));
  CHECK(same(hs, hardswish(x)));
  CHECK(same(selu_m, selu(x)));
  REQUIRE_THROWS_WITH(CELU(0.0), Catch::Contains("CELU"));
  REQUIRE_THROWS_WITH(Hardtanh(1, -1), Catch::Contains("Hardtanh"));
  REQUIRE_THROWS_WITH(Softshrink(-1), Catch::Contains("Softshrink"));
  REQUIRE_THROWS_WITH(glu(x, 0), Catch::Contains("glu"));
  std::ostringstream os;
  os << ELU(0.5) << ' ' << Hardtanh() << ' ' << Softshrink(0.25) << ' ' << Threshold(0.1, 20);
  CHECK(os.str() ==
        "ELU(alpha=0.5) Hardtanh(min_val=-1, max_val=1) Softshrink(0.25) Threshold(threshold=0.1, value=20)");
}

TEST_CASE("Unflatten, PixelShuffle and PixelUnshuffle reshape as PyTorch's", "[nn][activation]") {
  const Variable x(arange(0, 48, 1, DType::Float32).reshape({1, 8, 2, 3}));
  CHECK(Unflatten(1, {2, -1})(x).shape() == Shape{1, 2, 4, 2, 3});
  CHECK(Unflatten(-1, {3, 1})(x).shape() == Shape{1, 8, 2, 3, 1});
  REQUIRE_THROWS_WITH(Unflatten(1, {3, 3})(x), Catch::Contains("Unflatten"));
  const Variable up = PixelShuffle(2)(x);
  CHECK(up.shape() == Shape{1, 2, 4, 6});
  // torch.nn.functional.pixel_shuffle(torch.arange(48.).view(1, 8, 2, 3), 2)[0, 0, 0] and [0, 1, 3]
  const std::vector<float> v = to_vector<float>(up.data());
  CHECK(std::vector<float>(v.begin(), v.begin() + 6) == std::vector<float>{0, 6, 1, 7, 2, 8});
  CHECK(std::vector<float>(v.begin() + 42, v.end()) == std::vector<float>{39, 45, 40, 46, 41, 47});
  CHECK(equal(PixelUnshuffle(2)(up).data(), x.data()));
  REQUIRE_THROWS_WITH(PixelShuffle(3)(x), Catch::Contains("pixel_shuffle"));
}
