// Reductions: known values (from PyTorch) over any dims, keepdim, determinism across threads.
#include <catch2/catch.hpp>

#include "tests/common/values.h"
#include <ddl/ddl.h>

using namespace ddl;
using ddl::test::v;

namespace {
Tensor iota(const Shape& s) { return arange(0.0, static_cast<double>(s.numel()), 1.0, DType::Float64).reshape(s); }
}  // namespace

TEST_CASE("sum, mean and var over chosen dims", "[reduce]") {
  Tensor a = iota({2, 3, 4});
  REQUIRE(sum(a).item() == 276);
  REQUIRE(sum(a).dim() == 0);
  REQUIRE(v(sum(a, {0, 2})) == std::vector<double>{60, 92, 124});
  REQUIRE(sum(a, {0, 2}, true).shape() == Shape{1, 3, 1});
  REQUIRE(v(mean(a, {1})) == std::vector<double>{4, 5, 6, 7, 16, 17, 18, 19});
  REQUIRE(v(sum(a, {-1})) == v(sum(a, {2})));
  for (double x : v(var(a, {2}))) REQUIRE(x == Approx(5.0 / 3));
  Tensor b = from_vector<double>({3, 1, 4, 1, 5, 9, 2, 6}, {2, 4});
  REQUIRE(var(b).item() == Approx(7.553571428571));
  REQUIRE(v(var(b, {0}, 0)) == std::vector<double>{1, 16, 1, 6.25});
  REQUIRE_THROWS_WITH(sum(a, {3}), Catch::Contains("dimension 3 out of range"));
}

TEST_CASE("max, min and their indices", "[reduce]") {
  Tensor b = from_vector<double>({3, 1, 4, 1, 5, 9, 2, 6}, {2, 4});
  REQUIRE(v(amax(b, {1})) == std::vector<double>{4, 9});
  REQUIRE(v(amin(b, {0})) == std::vector<double>{3, 1, 2, 1});
  REQUIRE(to_vector<int64_t>(argmax(b, 1)) == std::vector<int64_t>{2, 1});
  REQUIRE(to_vector<int64_t>(argmin(b, 1)) == std::vector<int64_t>{1, 2});  // first of the tied minima
  REQUIRE(argmax(b, 1, true).shape() == Shape{2, 1});
  REQUIRE(argmax(b, 1).dtype() == DType::Int64);
  REQUIRE(amax(iota({2, 3, 4}), {0}).select(0, 0).select(0, 0).item() == 12);
  REQUIRE_THROWS_WITH(amax(zeros({0, 3}), {0}), Catch::Contains("empty dimension"));
}

TEST_CASE("sum_to reverses broadcasting", "[reduce]") {
  Tensor g = ones({2, 3, 4});
  REQUIRE(v(sum_to(g, {3, 1})) == std::vector<double>{8, 8, 8});
  REQUIRE(sum_to(g, {4}).shape() == Shape{4});
  REQUIRE(sum_to(g, {}).item() == 24);
  REQUIRE_THROWS(sum_to(g, {5}));
}

TEST_CASE("float sums are bitwise identical for 1 and 2 threads", "[reduce][threads]") {
  Generator gen(11);
  const Tensor x = randn({3, 300001}, gen);
  const Tensor y = randn({5000, 37}, gen);
  const int n = get_num_threads();
  set_num_threads(1);
  const auto a1 = to_vector<float>(sum(x, {1}));
  const float b1 = static_cast<float>(sum(x).item());
  const auto c1 = to_vector<float>(sum(y, {0}));
  set_num_threads(2);
  const auto a2 = to_vector<float>(sum(x, {1}));
  const float b2 = static_cast<float>(sum(x).item());
  const auto c2 = to_vector<float>(sum(y, {0}));
  set_num_threads(n);
  REQUIRE(a1 == a2);
  REQUIRE(b1 == b2);
  REQUIRE(c1 == c2);
  // And accurate: the float sum of a million ones is exact.
  REQUIRE(sum(ones({1000003})).item() == 1000003);
}

TEST_CASE("sums that keep a middle block of dims match the general path", "[reduce]") {
  Generator gen(12);
  const Tensor x = randn({6, 5, 7, 9}, gen, DType::Float64);
  // {0, 2, 3}: the bias-gradient pattern, summed in place; a permuted copy takes the general path.
  const Tensor fast = sum(x, {0, 2, 3});
  const Tensor general = sum(x.permute({1, 0, 2, 3}).contiguous(), {1, 2, 3});
  REQUIRE(allclose(fast, general, 1e-12, 1e-12));
  REQUIRE(sum(x, {0, 3}, true).shape() == Shape{1, 5, 7, 1});
  REQUIRE(allclose(sum(x, {0, 3}), sum(x.permute({1, 2, 0, 3}).contiguous(), {2, 3}), 1e-12, 1e-12));
  const Tensor f = randn({64, 32, 16, 16}, gen);
  const int n = get_num_threads();
  set_num_threads(1);
  const auto one = to_vector<float>(sum(f, {0, 2, 3}));
  set_num_threads(2);
  const auto two = to_vector<float>(sum(f, {0, 2, 3}));
  set_num_threads(n);
  REQUIRE(one == two);
}
