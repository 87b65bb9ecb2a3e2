// Rounding and integer-flavoured math (tensor/ops/math_ops.h, autograd/ops/math_ops.h): gradients against
// central finite differences in float64, and the values and refusals PyTorch 1.13 gives at the edges
// (ties to even, round's decimals, div's rounding modes on integers, remainder of a number).
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

TEST_CASE("rounding: gradients match finite differences away from the jumps", "[math][grad]") {
  // Values in (k + 0.1, k + 0.4) for integers k: every rounding op is flat there, frac has slope 1.
  const Tensor x = add(floor(random_double({3, 4}, 11, -4.0, 4.0)), random_double({3, 4}, 12, 0.1, 0.4));
  REQUIRE_GRADCHECK([](const V& v) { return floor(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const V& v) { return ceil(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const V& v) { return trunc(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const V& v) { return round(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const V& v) { return sign(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const V& v) { return frac(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const V& v) { return mul(frac(v[0]), v[0]); }, {x});
  // round with decimals: flat between the multiples of 0.1 (x * 10 stays off the half-integers).
  const Tensor y = div(add(floor(random_double({6}, 13, -40.0, 40.0)), 0.2), 10.0);
  REQUIRE_GRADCHECK([](const V& v) { return mul(round(v[0], 1), v[0]); }, {y});
  const Tensor d = from_vector<double>({1.3, -2.2, 4.9}), q = from_vector<double>({0.7, 0.9, -1.6});
  REQUIRE_GRADCHECK([](const V& v) { return div(v[0], v[1], "floor"); }, {d, q});
  REQUIRE_GRADCHECK([](const V& v) { return div(v[0], v[1], "trunc"); }, {d, q});
  REQUIRE_GRADCHECK([](const V& v) { return div(mul(v[0], v[0]), 0.3, "floor"); }, {d});
  // Without a mode, div is true division and keeps its gradient.
  REQUIRE_GRADCHECK([](const V& v) { return div(v[0], v[1], std::nullopt); }, {d, q});
}

TEST_CASE("pow of two tensors: gradients for both operands, broadcast, and second derivatives", "[math][grad]") {
  const Tensor a = random_double({3, 4}, 21, 0.3, 2.0), b = random_double({4}, 22, -1.5, 1.5);
  const test::VariableFn f = [](const V& v) { return pow(v[0], v[1]); };
  REQUIRE_GRADCHECK(f, {a, b});
  REQUIRE_GRADCHECK(first_grad(f, 0), {a, b});
  REQUIRE_GRADCHECK(first_grad(f, 1), {a, b});
  // A negative base to an integral power: the base's gradient only (the exponent's is NaN, log of < 0).
  const Tensor neg = from_vector<double>({-1.5, -0.7, -2.0}), ints = from_vector<double>({2.0, 3.0, -1.0});
  REQUIRE_GRADCHECK([ints](const V& v) { return pow(v[0], Variable(ints)); }, {neg});
  // PyTorch's masks: b = 0 gives no base gradient (even at a = 0), a = 0 with b >= 0 no exponent gradient.
  Variable x(from_vector<double>({0.0, 0.0, 2.0, -1.0, 0.0}), true),
      e(from_vector<double>({0.0, 1.0, 0.0, 2.0, -1.0}), true);
  sum(pow(x, e)).backward();
  const auto gx = to_vector<double>(x.grad()), ge = to_vector<double>(e.grad());
  CHECK(gx == std::vector<double>{0.0, 1.0, 0.0, -2.0, -std::numeric_limits<double>::infinity()});
  CHECK(ge[0] == 0.0);
  CHECK(ge[1] == 0.0);
  CHECK(ge[2] == Approx(std::log(2.0)));
  CHECK(std::isnan(ge[3]));
  CHECK(ge[4] == -std::numeric_limits<double>::infinity());
}

TEST_CASE("rounding: values at the edges, as PyTorch 1.13", "[math]") {
  const double inf = std::numeric_limits<double>::infinity();
  // Ties go to even, -0.0 and inf stay; floor and ceil of the same values.
  const Tensor t = from_vector<double>({0.5, 1.5, 2.5, -0.5, -2.5, -0.0, inf});
  const auto r = to_vector<double>(round(t));
  CHECK(r == std::vector<double>{0.0, 2.0, 2.0, -0.0, -2.0, -0.0, inf});
  CHECK(std::signbit(r[3]));
  CHECK(to_vector<double>(floor(t)) == std::vector<double>{0.0, 1.0, 2.0, -1.0, -3.0, -0.0, inf});
  CHECK(to_vector<double>(ceil(t)) == std::vector<double>{1.0, 2.0, 3.0, -0.0, -2.0, -0.0, inf});
  CHECK(std::signbit(to_vector<double>(ceil(t))[3]));
  CHECK(to_vector<double>(trunc(t)) == std::vector<double>{0.0, 1.0, 2.0, -0.0, -2.0, -0.0, inf});
  const auto fr = to_vector<double>(frac(t));
  CHECK(fr[1] == 0.5);
  CHECK(fr[4] == -0.5);
  CHECK(std::isnan(fr[6]));
  // round with decimals scales in the dtype: 1.2345 -> 1.23 in float32; negative decimals round to tens.
  CHECK(to_vector<float>(round(from_vector<float>({1.2345f, -1.2355f}), 2)) == std::vector<float>{1.23f, -1.24f});
  CHECK(to_vector<double>(round(from_vector<double>({1250.0, 1350.0, -1.0}), -2)) ==
        std::vector<double>{1200.0, 1400.0, -0.0});
  CHECK_THROWS_WITH(round(from_vector<int64_t>({1}), 2), Catch::Contains("round: decimals"));
  // bfloat16 scales in bfloat16, as PyTorch 1.13's CPU kernel: -1856 / 100 is -18.5 there, then -18 (ties to even).
  CHECK(to_vector<float>(round(from_vector<float>({-1856.0f}).to(DType::BFloat16), -2).to(DType::Float32)) ==
        std::vector<float>{-1800.0f});
  // float16 truncation takes the quotient rounded to float16 first: 2 / 0.010002136 = 199.957 is 200 there.
  const Tensor h = from_vector<float>({0.01000213623046875f}).to(DType::Float16);
  CHECK(to_vector<float>(div(full({1}, 2.0, DType::Float16), h, "trunc").to(DType::Float32)) ==
        std::vector<float>{200.0f});
  // Integers come back as they are; bools are refused, frac refuses integers.
  const Tensor i = from_vector<int64_t>({1, -2, 3});
  CHECK(floor(i).dtype() == DType::Int64);
  CHECK(to_vector<int64_t>(round(i)) == std::vector<int64_t>{1, -2, 3});
  CHECK_THROWS_WITH(floor(gt(i, 0.0)), Catch::Contains("floor: not supported for bool"));
  CHECK_THROWS_WITH(frac(i), Catch::Contains("frac: expected a floating tensor"));
}

TEST_CASE("div with a rounding mode and remainder of a number, as PyTorch 1.13", "[math]") {
  const Tensor a = from_vector<int64_t>({7, -7, 7, -7}), b = from_vector<int64_t>({2, 2, -2, -2});
  CHECK(to_vector<int64_t>(div(a, b, "trunc")) == std::vector<int64_t>{3, -3, -3, 3});
  CHECK(to_vector<int64_t>(div(a, b, "floor")) == std::vector<int64_t>{3, -4, -4, 3});
  CHECK(div(a, b, std::nullopt).dtype() == DType::Float32);
  CHECK(to_vector<int64_t>(div(a, 2.0, "floor")) == std::vector<int64_t>{3, -4, 3, -4});
  CHECK(div(a, 2.5, "trunc").dtype() == DType::Float32);
  const auto f = to_vector<double>(
      div(from_vector<double>({-7.0, 1.0, -1.0, 0.3}), from_vector<double>({2.0, 0.0, 0.0, 0.1}), "floor"));
  CHECK(f[0] == -4.0);
  CHECK(f[1] == std::numeric_limits<double>::infinity());
  CHECK(f[3] == 2.0);  // 0.3 / 0.1 is 2.9999999999999996 before rounding
  // INT64_MIN / -1 wraps instead of trapping (PyTorch's CPU kernel dies with SIGFPE there).
  const Tensor lowest = from_vector<int64_t>({std::numeric_limits<int64_t>::min()});
  CHECK(to_vector<int64_t>(div(lowest, -1.0, "floor")) == std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
  CHECK_THROWS_WITH(div(a, from_vector<int64_t>({1, 0, 1, 1}), "trunc"),
                    Catch::Contains("div: integer division by zero"));
  CHECK_THROWS_WITH(div(a, 0.0, "floor"), Catch::Contains("div: integer division by zero"));
  CHECK_THROWS_WITH(div(gt(a, 0.0), gt(b, 0.0), "floor"), Catch::Contains("div: not supported for bool"));
  CHECK_THROWS_WITH(div(a, b, "round"), Catch::Contains("div: expected rounding_mode"));
  // remainder(number, tensor): the sign of the divisor; a float number makes integers float32.
  CHECK(to_vector<int64_t>(remainder(5.0, from_vector<int64_t>({1, -2, 3}))) == std::vector<int64_t>{0, -1, 2});
  CHECK(to_vector<float>(remainder(5.5, from_vector<int64_t>({1, -2, 3}))) == std::vector<float>{0.5f, -0.5f, 2.5f});
  CHECK_THROWS_WITH(remainder(5.0, from_vector<int64_t>({0, 1})),
                    Catch::Contains("remainder: integer division by zero"));
  Variable x(from_vector<double>({1.5, -2.0}), true);
  const Variable y = remainder(5.0, x);
  CHECK(to_vector<double>(y.data()) == std::vector<double>{0.5, -1.0});
  CHECK_THROWS_WITH(sum(y).backward(), Catch::Contains("remainder: the derivative"));
  // pow of two tensors: integers stay integers; two bools are refused.
  CHECK(to_vector<int64_t>(pow(from_vector<int64_t>({1, -2, 3, 2}), from_vector<int64_t>({2, -1, 0, 62}))) ==
        std::vector<int64_t>{1, 0, 1, int64_t(1) << 62});
  CHECK_THROWS_WITH(pow(gt(a, 0.0), gt(b, 0.0)), Catch::Contains("pow: not supported for two bool"));
}
