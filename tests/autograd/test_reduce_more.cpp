// Gradient checks (first and second order, central differences in float64) of prod, std,
// logsumexp, norm, roll and tile, and the values PyTorch 1.13 gives at their edge cases.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/error_of.h"
#include "tests/common/first_grad.h"
#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::error_of;
using ddl::test::first_grad;
using ddl::test::random_double;
using V = std::vector<Variable>;
using ddl::test::VariableFn;

namespace {
// f's gradient, and the gradient of f^2's gradient (2 f f', which needs f's double backward
// and is not constant even where f is linear), against finite differences.
void check_twice(const VariableFn& f, const Tensor& x) {
  REQUIRE_GRADCHECK(f, {x});
  REQUIRE_GRADCHECK(first_grad([f](const V& v) { return pow(f(v), 2.0); }, 0), {x});
}
}  // namespace

TEST_CASE("prod: gradients without and with zeros", "[grad][reduce]") {
  const Tensor a = random_double({3, 4}, 1, 0.5, 1.5);
  check_twice([](const V& x) { return prod(x[0]); }, a);
  check_twice([](const V& x) { return prod(x[0], 1); }, a);
  check_twice([](const V& x) { return prod(x[0], 0, true); }, a);
  // One zero in a row: its gradient is the product of the others, not 0/0.
  const Tensor z = from_vector<double>({1.5, 0, -2, 3, 0.5, 2, 0, 0, 1.25}, {3, 3});
  check_twice([](const V& x) { return prod(x[0], 1); }, z);
  Variable v(from_vector<double>({2, 0, 3}), true);
  prod(v).backward();
  REQUIRE(to_vector<double>(v.grad()) == std::vector<double>{0, 6, 0});
  Variable w(from_vector<double>({2, 0, 0}), true);
  prod(w).backward();
  REQUIRE(to_vector<double>(w.grad()) == std::vector<double>{0, 0, 0});
}

TEST_CASE("prod: dtypes and empty products", "[reduce]") {
  REQUIRE(prod(from_vector<int32_t>({2, 3, 4})).dtype() == DType::Int64);
  REQUIRE(to_vector<int64_t>(prod(from_vector<int32_t>({2, 3, 4})))[0] == 24);
  REQUIRE(to_vector<float>(prod(zeros({0, 3}), 0)) == std::vector<float>{1, 1, 1});
  REQUIRE(error_of([] { prod(zeros({2, 3}), 2); }).find("prod") != std::string::npos);
}

TEST_CASE("std, logsumexp and norm gradients", "[grad][reduce]") {
  const Tensor a = random_double({3, 4}, 2);
  check_twice([](const V& x) { return ddl::std(x[0], {1}); }, a);
  check_twice([](const V& x) { return ddl::std(x[0], {}, 0, true); }, a);
  check_twice([](const V& x) { return logsumexp(x[0], {1}); }, a);
  check_twice([](const V& x) { return logsumexp(x[0], {0, 1}, true); }, a);
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {1.0, 2.0, 3.0, 1.5, 0.5, -1.0, inf, -inf})
    check_twice([p](const V& x) { return norm(x[0], p, {1}); }, a);
  check_twice([](const V& x) { return norm(x[0]); }, a);
}

TEST_CASE("std, logsumexp and norm at their edges", "[reduce]") {
  // a constant row: std 0 and gradient 0 (not 0 * inf)
  Variable c(from_vector<double>({1, 1, 1}), true);
  ddl::std(c).backward();
  REQUIRE(to_vector<double>(c.grad()) == std::vector<double>{0, 0, 0});
  // logsumexp does not overflow and takes infinities
  REQUIRE(to_vector<float>(logsumexp(from_vector<float>({1000, 1000}), {0}))[0] == Approx(1000 + std::log(2.0)));
  REQUIRE(std::isinf(to_vector<double>(logsumexp(from_vector<double>({-INFINITY, -INFINITY}), {0}))[0]));
  // the norm's gradient at 0 is 0
  Variable z(zeros({3}, DType::Float64), true);
  norm(z).backward();
  REQUIRE(to_vector<double>(z.grad()) == std::vector<double>{0, 0, 0});
  REQUIRE(to_vector<float>(norm(from_vector<float>({3, 0, -4}), 0))[0] == 2);
  REQUIRE(error_of([] { norm(zeros({0}), INFINITY); }).find("norm") != std::string::npos);
  REQUIRE(error_of([] { norm(from_vector<int64_t>({1, 2})); }).find("norm") != std::string::npos);
}

TEST_CASE("all, any and equal", "[reduce]") {
  const Tensor t = from_vector<float>({1, 0, 2, NAN}, {2, 2});
  REQUIRE(to_vector<uint8_t>(all(t, 1)) == std::vector<uint8_t>{0, 1});
  REQUIRE(to_vector<uint8_t>(any(t, 0)) == std::vector<uint8_t>{1, 1});
  REQUIRE(all(t).dim() == 0);
  REQUIRE(all(from_vector<uint8_t>({1, 2})).dtype() == DType::UInt8);
  REQUIRE(equal(from_vector<float>({1, 2}), from_vector<int64_t>({1, 2})));
  REQUIRE_FALSE(equal(from_vector<float>({NAN}), from_vector<float>({NAN})));
  REQUIRE_FALSE(equal(from_vector<float>({1}), from_vector<float>({1, 1})));
}

TEST_CASE("roll and tile: values and gradients", "[grad][shape]") {
  const Tensor a = arange(6).reshape({2, 3});
  REQUIRE(to_vector<int64_t>(roll(a, {1})) == std::vector<int64_t>{5, 0, 1, 2, 3, 4});
  REQUIRE(to_vector<int64_t>(roll(a, {1, -1}, {0, 1})) == std::vector<int64_t>{4, 5, 3, 1, 2, 0});
  REQUIRE(to_vector<int64_t>(tile(arange(3), {2, 2})) == std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
  REQUIRE(tile(ones({2, 3}), {2}).shape() == Shape{2, 6});
  REQUIRE(error_of([] { roll(ones({2, 3}), {1, 2}, {0}); }).find("roll") != std::string::npos);
  REQUIRE(error_of([] { tile(ones({2, 3}), {-1}); }).find("tile") != std::string::npos);
  const Tensor x = random_double({3, 4}, 3);
  check_twice([](const V& v) { return mul(roll(v[0], {2, -1}, {1, 0}), v[0]); }, x);
  check_twice([](const V& v) { return mul(tile(v[0], {2, 1, 2}), 1.5); }, x);
}

TEST_CASE("linspace and logspace", "[factory]") {
  REQUIRE(to_vector<float>(linspace(0, 1, 5)) == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1});
  REQUIRE(to_vector<int64_t>(linspace(0, 10, 5, DType::Int64)) == std::vector<int64_t>{0, 2, 5, 7, 10});
  REQUIRE(to_vector<double>(logspace(0, 2, 3, 10.0, DType::Float64)) == std::vector<double>{1, 10, 100});
  REQUIRE(linspace(0, 1, 0).numel() == 0);
  REQUIRE(error_of([] { linspace(0, 1, -1); }).find("linspace") != std::string::npos);
}
