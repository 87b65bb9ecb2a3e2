// tensor/ops/math_ops.h and autograd/ops/math_ops.h: gradients (and second derivatives) against
// central finite differences in float64, and the values and refusals PyTorch 1.13 gives at the
// edges (Python's modulo, lerp's exact ends, clamp's NaN bounds, integer pow and division).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/first_grad.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::first_grad;
using test::random_double;
using V = std::vector<Variable>;

namespace {

// f's gradient and, when `second`, the gradient of its gradient, at x (any number of inputs).
void check_grads(const test::VariableFn& f, const std::vector<Tensor>& xs, bool second = true) {
  REQUIRE_GRADCHECK(f, xs);
  if (!second) return;
  for (size_t k = 0; k < xs.size(); ++k) {
    INFO("second derivative through input " << k);
    REQUIRE_GRADCHECK(first_grad(f, k), xs);
  }
}

}  // namespace

TEST_CASE("math: unary gradients match finite differences", "[math][grad]") {
  const Tensor x = random_double({3, 4}, 1, -0.9, 0.9);
  const Tensor big = random_double({3, 4}, 2, 1.2, 3.0);
  using Fn = Variable (*)(const Variable&);
  const std::vector<std::pair<const char*, Fn>> on_unit = {
      {"sin", sin},   {"cos", cos},   {"tan", tan},     {"asin", asin},   {"acos", acos},   {"atan", atan},
      {"sinh", sinh}, {"cosh", cosh}, {"asinh", asinh}, {"atanh", atanh}, {"log1p", log1p}, {"expm1", expm1}};
  for (const auto& [name, fn] : on_unit) {
    INFO(name);
    check_grads([fn = fn](const V& v) { return fn(v[0]); }, {x});
  }
  INFO("acosh");
  check_grads([](const V& v) { return acosh(v[0]); }, {big});
}

TEST_CASE("math: softplus gradients on both sides of the threshold", "[math][grad]") {
  const Tensor x = random_double({12}, 3, -4.0, 4.0);
  for (auto [beta, threshold] : {std::pair{1.0, 20.0}, {2.0, 1.0}, {0.5, 0.5}}) {
    INFO("beta " << beta << " threshold " << threshold);
    check_grads([beta = beta, threshold = threshold](const V& v) { return softplus(v[0], beta, threshold); }, {x});
  }
  // Above the threshold softplus is x itself; below it log(1 + exp(beta x)) / beta.
  const auto y = to_vector<double>(softplus(from_vector<double>({30.0, 0.0, -30.0}), 1.0, 20.0));
  CHECK(y[0] == 30.0);
  CHECK(y[1] == Approx(std::log(2.0)));
  CHECK(y[2] == Approx(std::exp(-30.0)));
  CHECK_THROWS_WITH(softplus(from_vector<int64_t>({1})), Catch::Contains("softplus"));
}

TEST_CASE("math: binary gradients, broadcast", "[math][grad]") {
  const Tensor a = random_double({3, 4}, 4, -2.0, 2.0), b = random_double({4}, 5, 0.5, 1.5);
  check_grads([](const V& v) { return atan2(v[0], v[1]); }, {a, b});
  // fmod and remainder are piecewise linear in b: keep a / b away from integers (the jumps). Their
  // gradients, lerp's with a number weight and clamp's are constants of the inputs: no second derivative.
  const Tensor num = from_vector<double>({2.3, -2.3, 5.6, -0.4}), den = from_vector<double>({1.1, 0.9, -1.7, 0.7});
  check_grads([](const V& v) { return fmod(v[0], v[1]); }, {num, den}, false);
  check_grads([](const V& v) { return remainder(v[0], v[1]); }, {num, den}, false);
  check_grads([](const V& v) { return lerp(v[0], v[1], v[2]); }, {a, b, random_double({3, 1}, 6, -0.5, 1.5)});
  check_grads([](const V& v) { return lerp(v[0], v[1], 0.3); }, {a, b}, false);
  check_grads([](const V& v) { return lerp(v[0], v[1], 0.8); }, {a, b}, false);
  check_grads([](const V& v) { return pow(2.5, v[0]); }, {a});
  check_grads([](const V& v) { return 3.0 / v[0]; }, {b});
}

TEST_CASE("math: clamp by tensors sends the gradient to whichever operand is the result", "[math][grad]") {
  const Tensor x = from_vector<double>({-3.0, -0.5, 0.2, 0.9, 2.5, 0.1});
  const Tensor lo = from_vector<double>({-1.0, -1.0, -1.0, -1.0, -1.0, 0.5});
  const Tensor hi = from_vector<double>({1.0, 1.0, 1.0, 1.0, 1.0, -0.5});  // the last: lo > hi
  check_grads([](const V& v) { return clamp(v[0], v[1], v[2]); }, {x, lo, hi}, false);
  check_grads([](const V& v) { return clamp_min(v[0], v[1]); }, {x, lo}, false);
  check_grads([](const V& v) { return clamp_max(v[0], v[1]); }, {x, hi}, false);
  Variable xv(x, true), lv(lo, true), hv(hi, true);
  sum(clamp(xv, lv, hv)).backward();
  CHECK(to_vector<double>(xv.grad()) == std::vector<double>{0, 1, 1, 1, 0, 0});
  CHECK(to_vector<double>(lv.grad()) == std::vector<double>{1, 0, 0, 0, 0, 0});
  CHECK(to_vector<double>(hv.grad()) == std::vector<double>{0, 0, 0, 0, 1, 1});
}

TEST_CASE("math: values at the edges, as PyTorch 1.13", "[math]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // Python's modulo takes the sign of the divisor; C's fmod that of the dividend.
  const Tensor a = from_vector<int64_t>({-7, 7, -7, 7}), b = from_vector<int64_t>({3, -3, -3, 3});
  CHECK(to_vector<int64_t>(remainder(a, b)) == std::vector<int64_t>{2, -2, -1, 1});
  CHECK(to_vector<int64_t>(fmod(a, b)) == std::vector<int64_t>{-1, 1, -1, 1});
  CHECK(remainder(a, b).dtype() == DType::Int64);
  CHECK(remainder(from_vector<double>({-1.0}), inf).item() == inf);  // -1 % inf in Python
  CHECK(std::isnan(fmod(from_vector<double>({1.0}), 0.0).item()));
  CHECK_THROWS_WITH(fmod(a, from_vector<int64_t>({1, 0, 1, 1})), Catch::Contains("fmod: integer division by zero"));
  CHECK_THROWS_WITH(remainder(a, 0.0), Catch::Contains("remainder: integer division by zero"));
  CHECK(to_vector<int64_t>(fmod(from_vector<int64_t>({std::numeric_limits<int64_t>::min()}), -1.0)) ==
        std::vector<int64_t>{0});
  // lerp is exact at its ends, and refuses operands of different dtypes.
  const Tensor s = from_vector<float>({1e8f, -3.0f}), e = from_vector<float>({1.0f, 5.0f});
  CHECK(to_vector<float>(lerp(s, e, 1.0)) == to_vector<float>(e));
  CHECK(to_vector<float>(lerp(s, e, 0.0)) == to_vector<float>(s));
  CHECK_THROWS_WITH(lerp(s, e.to(DType::Float64), 0.5), Catch::Contains("lerp: expected dtype"));
  // clamp by tensors: any NaN gives NaN, lo > hi gives hi, and the dtype of all three.
  const Tensor c = clamp(from_vector<double>({nan, 0.0, 0.0, 5.0}), from_vector<double>({0.0, nan, 2.0, 0.0}),
                         from_vector<double>({1.0, 1.0, 1.0, nan}));
  const auto cv = to_vector<double>(c);
  CHECK((std::isnan(cv[0]) && std::isnan(cv[1]) && cv[2] == 1.0 && std::isnan(cv[3])));
  CHECK(clamp(from_vector<int64_t>({1, 5}), scalar_tensor(1.5, DType::Float64), std::nullopt).dtype() ==
        DType::Float64);
  // Integer pow of a scalar base: exact, and 0 for negative powers of |base| > 1.
  CHECK(to_vector<int64_t>(pow(2.0, from_vector<int64_t>({-1, 0, 10, 62}))) ==
        std::vector<int64_t>{0, 1, 1024, int64_t(1) << 62});
  CHECK(to_vector<int64_t>(pow(-1.0, from_vector<int64_t>({-3, -2}))) == std::vector<int64_t>{-1, 1});
  CHECK(pow(2.5, from_vector<int64_t>({2})).dtype() == DType::Float32);
  // A number over a tensor is true division; integers give float32.
  const Tensor q = 1.0 / from_vector<int64_t>({2, 0});
  CHECK(q.dtype() == DType::Float32);
  CHECK(to_vector<float>(q) == std::vector<float>{0.5f, INFINITY});
  CHECK(to_vector<double>(2.0 - from_vector<double>({0.5})) == std::vector<double>{1.5});
  // The float functions of integers give float32.
  CHECK(atan2(from_vector<int64_t>({1}), from_vector<int64_t>({0})).dtype() == DType::Float32);
  CHECK(sin(from_vector<int32_t>({0})).dtype() == DType::Float32);
  CHECK(std::isnan(asin(from_vector<double>({2.0})).item()));
  CHECK(atanh(from_vector<double>({1.0})).item() == inf);
}
