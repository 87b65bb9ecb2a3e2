// Factories, random draws, dropout, sort, split and scan against PyTorch 1.13's
// behaviour where the reference sweep (docs/reference_sweep.md) found ddl
// disagreeing. Expected values were probed with torch 1.13.1 (CPU).
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "tests/common/error_of.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using Catch::Matchers::Contains;
using ddl::test::error_of;

TEST_CASE("16-bit uniform draws stay below 1", "[random][half]") {
  // Rounding a float32 draw to bfloat16 gives 1.0 for about 1 draw in 512; PyTorch
  // draws a 16-bit uniform from as many random bits as the type's significand holds.
  Generator g(7);
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    CAPTURE(dt);
    const Tensor u = rand({1 << 16}, g, dt);
    REQUIRE(u.dtype() == dt);
    REQUIRE(amin(u).item() >= 0.0);
    REQUIRE(amax(u).item() < 1.0);
    REQUIRE(mean(u.to(DType::Float64)).item() == Approx(0.5).margin(0.01));
    const Tensor w = empty({1 << 16}, dt);
    uniform_(w, 0.0, 1.0, g);
    REQUIRE(amax(w).item() < 1.0);
    REQUIRE(amax(rand_like(w, g)).item() < 1.0);
  }
  // float32 and float64 draws are unchanged: the counter scheme's own test pins them.
  Generator a(3), b(3);
  REQUIRE(to_vector<float>(rand({8}, a)) == to_vector<float>(rand({8}, b)));
}

TEST_CASE("random ops name the op called when refusing a dtype", "[random][errors]") {
  Generator g(1);
  const Tensor i = zeros({3, 4}, DType::Int64);
  REQUIRE_THAT(error_of([&] { rand_like(i, g); }), Contains("rand_like: expected a float dtype, got int64"));
  REQUIRE_THAT(error_of([&] { randn_like(i, g); }), Contains("randn_like: expected a float dtype, got int64"));
  REQUIRE_THAT(error_of([&] { rand_like(i); }), Contains("rand_like:"));
  // torch 1.13: "check_uniform_bounds" / "normal_kernel_cpu" not implemented for 'Long' and 'Bool'.
  REQUIRE_THAT(error_of([&] { uniform_(i, 0.0, 1.0, g); }), Contains("uniform_: expected a float tensor"));
  REQUIRE_THAT(error_of([&] { uniform_(zeros({2}, DType::Bool), 0.0, 1.0, g); }), Contains("uniform_: expected"));
  REQUIRE_THAT(error_of([&] { normal_(i, 0.0, 1.0, g); }), Contains("normal_: expected a float tensor"));
  REQUIRE_THAT(error_of([&] { bernoulli({2}, 0.5, g, DType::Bool); }),
               Contains("bernoulli: expected a numeric tensor, got bool"));
  REQUIRE(to_vector<int64_t>(i) == std::vector<int64_t>(12, 0));
}

TEST_CASE("arange checks the step's sign and truncates integer arguments", "[factory]") {
  // torch: "upper bound and larger bound inconsistent with step sign".
  REQUIRE_THAT(error_of([&] { arange(-5); }), Contains("arange: end -5 is on the wrong side of start 0 for step 1"));
  REQUIRE_THAT(error_of([&] { arange(0.0, 5.0, -1.0); }), Contains("arange: end 5 is on the wrong side"));
  // An int64 arange truncates step 0.5 to 0 (torch: "step must be nonzero").
  REQUIRE_THAT(error_of([&] { arange(0.0, 5.0, 0.5, DType::Int64); }), Contains("arange: step must be nonzero"));
  REQUIRE(arange(0).numel() == 0);
  REQUIRE(to_vector<int64_t>(arange(0.0, 5.0, 1.5, DType::Int64)) == std::vector<int64_t>{0, 1, 2, 3, 4});
  REQUIRE(to_vector<double>(arange(1.0, -1.0, -0.5, DType::Float64)) == std::vector<double>{1, 0.5, 0, -0.5});
  // 16-bit floats: torch.arange(0, 1, 0.1, dtype=torch.bfloat16)[:4] is [0, 0.1001, 0.2002, 0.3008].
  const Tensor h = arange(0.0, 1.0, 0.1, DType::BFloat16);
  REQUIRE(h.dtype() == DType::BFloat16);
  REQUIRE(h.numel() == 10);
  REQUIRE(h.index({3}).item() == Approx(0.30078125));
  REQUIRE(to_vector<double>(arange(0.0, 3.0, 1.0, DType::Float16)) == std::vector<double>{0, 1, 2});
}

TEST_CASE("arange into a narrow integer dtype wraps as PyTorch's, with no undefined conversion", "[factory]") {
  // torch.arange(-3, 3, dtype=torch.uint8) and torch.arange(0, 5e9, 2e9, dtype=torch.int32):
  // computed in int64, then wrapped (a negative double converted straight to uint8 is
  // undefined behaviour, which UBSan reports).
  REQUIRE(to_vector<uint8_t>(arange(-3.0, 3.0, 1.0, DType::UInt8)) == std::vector<uint8_t>{253, 254, 255, 0, 1, 2});
  REQUIRE(to_vector<int32_t>(arange(0.0, 5e9, 2e9, DType::Int32)) == std::vector<int32_t>{0, 2000000000, -294967296});
  // torch: "value cannot be converted to type int64_t without overflow".
  REQUIRE_THAT(error_of([&] { arange(1e19, 1e19 + 1e6, 1e5, DType::Int64); }),
               Contains("arange: start 1e+19 cannot be converted to int64 without overflow"));
  REQUIRE_THAT(error_of([&] { arange(-1e19, 0.0, 1e18, DType::UInt8); }),
               Contains("arange: start -1e+19 cannot be converted to int64 without overflow"));
}

TEST_CASE("dropout of an integer tensor with p = 1 gives zeros, as in PyTorch", "[dropout]") {
  Generator g(1);
  const Variable x(arange(0.0, 6.0, 1.0, DType::Int64).reshape({2, 3}));
  const Variable y = dropout(x, 1.0, true, g);
  REQUIRE(y.data().dtype() == DType::Int64);
  REQUIRE(to_vector<int64_t>(y.data()) == std::vector<int64_t>(6, 0));
  REQUIRE(to_vector<int64_t>(x.data()) == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  // Any other p scales by 1 / (1 - p) (torch: "result type Float can't be cast to ... Long").
  REQUIRE_THAT(error_of([&] { dropout(x, 0.5, true, g); }), Contains("dropout: expected a float input"));
}

TEST_CASE("argsort, split_with_sizes and cumsum_backward errors name the op called", "[errors]") {
  const Tensor x = zeros({6, 2}, DType::Float64);
  REQUIRE_THAT(error_of([&] { argsort(x, 2); }), Contains("argsort: dimension 2 out of range"));
  REQUIRE_THAT(error_of([&] { sort(x, 2); }), Contains("sort: dimension 2 out of range"));
  REQUIRE_THAT(error_of([&] {
                 split_with_sizes(x, {1, 2}, 0);
               }),
               Contains("split_with_sizes: split_sizes add up to 3 but dimension 0 of float64[6, 2] has size 6"));
  REQUIRE_THAT(error_of([&] { split_with_sizes(x, {-1, 7}, 0); }), Contains("split_with_sizes: negative size -1"));
  REQUIRE_THAT(error_of([&] { split(x, std::vector<int64_t>{1, 2}, 0); }), Contains("split: split_sizes add up"));
  REQUIRE_THAT(error_of([&] { cumsum_backward(x, 2); }), Contains("cumsum_backward: dimension 2 out of range"));
  REQUIRE_THAT(error_of([&] { cumsum(x, 2); }), Contains("cumsum: dimension 2 out of range"));
}
