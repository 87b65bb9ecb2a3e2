// Dim arguments on 0-d tensors, as PyTorch 1.13 treats them (tests/golden/reduce_parity.py
// prints the reference): reductions, sort and transpose take dim 0 or -1 as if the
// tensor had one dim of size 1; select, narrow and slice refuse; any other dim is
// an out-of-range error. Each of these crashed (indexed shape[0]) before.
#include <catch2/catch.hpp>
#include <cmath>

#include <ddl/ddl.h>

using namespace ddl;

TEST_CASE("reductions of a 0-d tensor over dim 0 or -1 give the element", "[scalar][reduce]") {
  const Tensor x = scalar_tensor(2.0);
  for (int64_t d : {0, -1}) {
    INFO("dim " << d);
    for (bool keep : {false, true}) {
      REQUIRE(sum(x, {d}, keep).shape() == Shape{});
      REQUIRE(sum(x, {d}, keep).item() == 2.0);
    }
    REQUIRE(mean(x, {d}).item() == 2.0);
    REQUIRE(std::isnan(var(x, {d}).item()));  // one element, Bessel's correction: 0 / 0
    REQUIRE(var(x, {d}, 0).item() == 0.0);
    REQUIRE(amax(x, {d}).item() == 2.0);
    REQUIRE(amin(x, {d}, true).shape() == Shape{});
    REQUIRE(argmax(x, d).item() == 0);
    REQUIRE(argmin(x, d, true).shape() == Shape{});
    auto [v, i] = x.max(d);
    REQUIRE((v.item() == 2.0 && i.item() == 0 && v.dim() == 0 && i.dim() == 0));
    auto [v2, i2] = x.min(d, true);
    REQUIRE((v2.item() == 2.0 && i2.item() == 0 && v2.dim() == 0));
    REQUIRE(cumsum(x, d).item() == 2.0);
    REQUIRE(sort(x, d).values.item() == 2.0);
    REQUIRE(topk(x, 1, d).indices.item() == 0);
    REQUIRE(kthvalue(x, 1, d, true).values.shape() == Shape{});
  }
  // dims {0, -1} name the one dim twice (torch: "dim 0 appears multiple times").
  REQUIRE_THROWS_WITH(sum(x, {0, -1}), Catch::Contains("sum") && Catch::Contains("twice"));
  REQUIRE_THROWS_WITH(amax(x, {0, 0}), Catch::Contains("amax"));
}

TEST_CASE("dims other than 0 and -1 of a 0-d tensor are out of range", "[scalar][errors]") {
  const Tensor x = scalar_tensor(2.0);
  for (int64_t d : {1, -2}) {
    INFO("dim " << d);
    REQUIRE_THROWS_WITH(sum(x, {d}), Catch::Contains("sum: dimension"));
    REQUIRE_THROWS_WITH(mean(x, {d}), Catch::Contains("mean: dimension"));
    REQUIRE_THROWS_WITH(var(x, {d}), Catch::Contains("var: dimension"));
    REQUIRE_THROWS_WITH(amax(x, {d}), Catch::Contains("amax: dimension"));
    REQUIRE_THROWS_WITH(x.max(d), Catch::Contains("max: dimension"));
    REQUIRE_THROWS_WITH(argmin(x, d), Catch::Contains("argmin: dimension"));
    REQUIRE_THROWS_WITH(x.transpose(0, d), Catch::Contains("transpose"));
    REQUIRE_THROWS_WITH(flip(x, {d}), Catch::Contains("flip"));
    // The range is that of a 0-d tensor (torch: "expected to be in range of [-1, 0]").
    REQUIRE_THROWS_WITH(sort(x, d), Catch::Contains("sort") && Catch::Contains("with 0 dims"));
    REQUIRE_THROWS_WITH(cumsum(x, d), Catch::Contains("cumsum") && Catch::Contains("with 0 dims"));
    REQUIRE_THROWS_WITH(x.squeeze(d), Catch::Contains("squeeze"));
    REQUIRE_THROWS_WITH(x.flatten(d), Catch::Contains("flatten"));
  }
}

TEST_CASE("views of a 0-d tensor: transpose, flip, squeeze work; select, narrow, slice, size refuse",
          "[scalar][views]") {
  const Tensor x = scalar_tensor(2.0);
  REQUIRE(x.transpose(0, -1).item() == 2.0);
  REQUIRE(x.transpose(-1, -1).shape() == Shape{});
  REQUIRE(flip(x, {0}).item() == 2.0);
  REQUIRE(flip(x, {-1}).shape() == Shape{});
  REQUIRE_THROWS_WITH(flip(x, {0, -1}), Catch::Contains("flip") && Catch::Contains("multiple"));
  REQUIRE(x.squeeze(0).shape() == Shape{});
  REQUIRE(x.unsqueeze(-1).shape() == Shape{1});
  REQUIRE(x.flatten(0, -1).shape() == Shape{1});
  REQUIRE(repeat(x, {2, 3}).shape() == Shape{2, 3});
  for (int64_t d : {0, -1}) {
    REQUIRE_THROWS_WITH(x.select(d, 0), Catch::Contains("select") && Catch::Contains("0-dim"));
    REQUIRE_THROWS_WITH(x.narrow(d, 0, 1), Catch::Contains("narrow") && Catch::Contains("0-dim"));
    REQUIRE_THROWS_WITH(x.slice(d, 0, 1), Catch::Contains("slice") && Catch::Contains("0-dim"));
    REQUIRE_THROWS_WITH(x.size(d), Catch::Contains("size") && Catch::Contains("0-dim"));
    REQUIRE_THROWS_WITH(x.stride(d), Catch::Contains("stride") && Catch::Contains("0-dim"));
  }
}

TEST_CASE("0-d Variables: reductions over dim 0 differentiate; views of them too", "[scalar][grad]") {
  Variable v(scalar_tensor(3.0, DType::Float64), true);
  sum(v, {0}).backward();
  REQUIRE(v.grad().item() == 1.0);
  v.zero_grad();
  mean(v, {-1}, true).backward();
  REQUIRE(v.grad().item() == 1.0);
  v.zero_grad();
  amax(v, {0}).backward();
  REQUIRE(v.grad().item() == 1.0);
  v.zero_grad();
  v.max(0).values.backward();
  REQUIRE(v.grad().item() == 1.0);
  v.zero_grad();
  var(v, {0}, 0).backward();
  REQUIRE(v.grad().item() == 0.0);
  v.zero_grad();
  v.transpose(0, -1).backward();
  REQUIRE(v.grad().item() == 1.0);
  v.zero_grad();
  flip(v, {0}).backward();
  REQUIRE(v.grad().item() == 1.0);
  REQUIRE_THROWS_WITH(v.select(0, 0), Catch::Contains("select"));
  // permute's inverse is built from dims that must be checked first (a 2-d permute({1}) wrote out of bounds).
  Variable m(zeros({2, 3}), true);
  REQUIRE_THROWS_WITH(m.permute({1}), Catch::Contains("permute"));
}
