// Seeded random numbers: known Philox answers, distributions, thread independence.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include <ddl/ddl.h>

using namespace ddl;

TEST_CASE("philox4x32-10 matches the Random123 known answer", "[random]") {
  uint32_t out[4];
  philox4x32(0, 0, out);
  REQUIRE(out[0] == 0x6627e8d5u);
  REQUIRE(out[1] == 0xe169c58du);
  REQUIRE(out[2] == 0xbc57ac4cu);
  REQUIRE(out[3] == 0x9b00dbd8u);
}

TEST_CASE("same seed gives the same numbers; each draw advances the stream", "[random]") {
  Generator g1(42), g2(42);
  const auto first = to_vector<float>(rand({100}, g1));
  REQUIRE(first == to_vector<float>(rand({100}, g2)));
  REQUIRE(to_vector<float>(rand({100}, g1)) != first);
  REQUIRE(g1.offset() == 200);
  g1.manual_seed(42);
  REQUIRE(to_vector<float>(rand({100}, g1)) == first);
  Generator other(43);
  REQUIRE(to_vector<float>(rand({100}, other)) != first);
}

TEST_CASE("random tensors do not depend on the thread count", "[random][threads]") {
  const int n = get_num_threads();
  set_num_threads(1);
  Generator a(7);
  const auto one = to_vector<float>(randn({50000}, a));
  set_num_threads(2);
  Generator b(7);
  const auto two = to_vector<float>(randn({50000}, b));
  set_num_threads(n);
  REQUIRE(one == two);
}

TEST_CASE("distributions have the right moments and ranges", "[random]") {
  Generator g(1);
  const Tensor u = rand({200000}, g, DType::Float64);
  REQUIRE(amin(u).item() >= 0.0);
  REQUIRE(amax(u).item() < 1.0);
  REQUIRE(mean(u).item() == Approx(0.5).margin(0.005));
  REQUIRE(var(u).item() == Approx(1.0 / 12).margin(0.002));
  const Tensor z = randn({200000}, g);
  REQUIRE(mean(z).item() == Approx(0.0).margin(0.01));
  REQUIRE(var(z).item() == Approx(1.0).margin(0.02));
  Tensor w = empty({100000});
  normal_(w, 3.0, 2.0, g);
  REQUIRE(mean(w).item() == Approx(3.0).margin(0.03));
  uniform_(w, -2.0, 5.0, g);
  REQUIRE(amin(w).item() >= -2.0);
  REQUIRE(amax(w).item() < 5.0);
  const Tensor b = bernoulli({100000}, 0.3, g);
  REQUIRE(mean(b).item() == Approx(0.3).margin(0.01));
}

TEST_CASE("randint covers its range; randperm is a permutation", "[random]") {
  Generator g(3);
  const auto r = to_vector<int64_t>(randint(-2, 3, {10000}, g));
  REQUIRE(*std::min_element(r.begin(), r.end()) == -2);
  REQUIRE(*std::max_element(r.begin(), r.end()) == 2);
  auto p = to_vector<int64_t>(randperm(1000, g));
  REQUIRE(std::set<int64_t>(p.begin(), p.end()).size() == 1000);
  REQUIRE_FALSE(std::is_sorted(p.begin(), p.end()));
  REQUIRE_THROWS_WITH(randint(3, 3, {1}, g), Catch::Contains("empty range"));
}
