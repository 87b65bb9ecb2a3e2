// Indexing, random and factory ops against PyTorch 1.13's behaviour where the
// reference sweep (docs/reference_sweep.md) found ddl disagreeing: 16-bit kernels,
// 0-d selves, values PyTorch refuses, 16-bit uniforms, and error messages that
// name the op the user called. Expected values were probed with torch 1.13.1 (CPU).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>

#include "tests/common/error_of.h"
#include "tests/common/values.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using Catch::Matchers::Contains;
using ddl::test::error_of;
using ddl::test::ints;

TEST_CASE("index-driven ops take float16 and bfloat16 on the CPU", "[indexing][half]") {
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    CAPTURE(dt);
    const Tensor x = arange(0.0, 12.0, 1.0, dt).reshape({3, 4});
    const Tensor idx = ints({0, 3, 1, 1, 2, 0}, {3, 2});
    REQUIRE(gather(x, 1, idx).dtype() == dt);
    REQUIRE(to_vector<double>(gather(x, 1, idx)) == std::vector<double>{0, 3, 5, 5, 10, 8});
    REQUIRE(to_vector<double>(flip(x, {1}).index({0})) == std::vector<double>{3, 2, 1, 0});
    REQUIRE(to_vector<double>(index_select(x, 0, ints({2, 0}, {2})).index({Slice(), 0})) == std::vector<double>{8, 0});
    REQUIRE(to_vector<double>(x.index({ints({2, 0}, {2}), 1})) == std::vector<double>{9, 1});
    const Tensor src = full({3, 2}, 0.5, dt);
    REQUIRE(to_vector<double>(scatter(zeros({3, 4}, dt), 1, idx, src).index({0})) ==
            std::vector<double>{0.5, 0, 0, 0.5});
    REQUIRE(to_vector<double>(scatter(zeros({3, 4}, dt), 1, idx, 2.0).index({1})) == std::vector<double>{0, 2, 0, 0});
    // Duplicates accumulate: row 1 of idx hits column 1 twice.
    REQUIRE(to_vector<double>(scatter_add(zeros({3, 4}, dt), 1, idx, src).index({1})) ==
            std::vector<double>{0, 1, 0, 0});
    REQUIRE(to_vector<double>(index_add(zeros({2, 2}, dt), 0, ints({1, 1}, {2}), ones({2, 2}, dt)).index({1})) ==
            std::vector<double>{2, 2});
    const Tensor y = zeros({4}, dt);
    index_put_(y, {ints({1, 3}, {2})}, full({2}, 1.5, dt), false);
    REQUIRE(to_vector<double>(y) == std::vector<double>{0, 1.5, 0, 1.5});
    REQUIRE(to_vector<int64_t>(nonzero(y)) == std::vector<int64_t>{1, 3});
    REQUIRE(nonzero(full({}, 1.0, dt)).shape() == Shape{1, 0});
  }
}

TEST_CASE("index_select and index_add take a 0-d self as PyTorch does", "[indexing]") {
  const Tensor s = scalar_tensor(5.0, DType::Float64);
  // torch.index_select(torch.tensor(5.), 0, torch.tensor([0, 0])) is tensor(5.): self's 0-d shape.
  REQUIRE(index_select(s, 0, ints({0, 0}, {2})).shape() == Shape{});
  REQUIRE(index_select(s, -1, ints({0}, {1})).item() == 5.0);
  // torch.tensor(5.).index_add(0, torch.tensor([0, 0]), torch.tensor([2., 3.])) is tensor(10.).
  const Tensor a = index_add(s, 0, ints({0, 0}, {2}), from_vector(std::vector<double>{2, 3}));
  REQUIRE(a.shape() == Shape{});
  REQUIRE(a.item() == 10.0);
  REQUIRE(s.item() == 5.0);
  REQUIRE_THAT(error_of([&] { index_select(s, 0, ints({1}, {1})); }), Contains("index_select: index 1 is out of"));
  REQUIRE_THAT(error_of([&] { index_select(s, 1, ints({0}, {1})); }), Contains("index_select: dimension 1"));
  REQUIRE_THAT(error_of([&] { index_add(s, 0, ints({1}, {1}), from_vector(std::vector<double>{1})); }),
               Contains("index_add: index 1 is out of"));
}

TEST_CASE("index_put needs values of the destination dtype with index tensors", "[indexing][errors]") {
  const Tensor x = zeros({4, 5}, DType::Float64);
  const Tensor v = ones({2, 5}, DType::Float32);
  // torch: "Index put requires the source and destination dtypes match".
  REQUIRE_THAT(error_of([&] {
                 index_put(x, {ints({1, 2}, {2})}, v, false);
               }),
               Contains("index_put: values float32[2, 5] must have the dtype of the indexed tensor float64[4, 5]"));
  REQUIRE_THAT(error_of([&] { index_put_(x, {ints({1, 2}, {2})}, v, true); }), Contains("index_put_: values"));
  // Integers and slices alone are a copy_, which converts (x[1:3] = v in PyTorch).
  index_put_(x, {Slice(1, 3)}, v, false);
  REQUIRE(sum(x).item() == 10.0);
}

TEST_CASE("index_put, scatter and scatter_add errors name the op called", "[indexing][errors]") {
  const Tensor x = zeros({4, 3}, DType::Float64);
  REQUIRE_THAT(error_of([&] {
                 index_put(x, {ints({4}, {1})}, ones({1, 3}, DType::Float64), false);
               }),
               Contains("index_put: index 4 is out of bounds for dimension 0 with size 4"));
  const Tensor idx = ints({4}, {1, 1});
  const Tensor src = ones({1, 1}, DType::Float64);
  REQUIRE_THAT(error_of([&] { scatter(x, 0, idx, src); }),
               Contains("scatter: index 4 is out of bounds for dimension 0 with size 4"));
  REQUIRE_THAT(error_of([&] { scatter(x, 2, idx, 1.0); }), Contains("scatter: dimension 2 out of range"));
  REQUIRE_THAT(error_of([&] { scatter_(x, 0, idx, src); }), Contains("scatter_: index 4"));
  REQUIRE_THAT(error_of([&] { scatter_add(x, 0, idx, src); }),
               Contains("scatter_add: index 4 is out of bounds for dimension 0 with size 4"));
  REQUIRE_THAT(error_of([&] { scatter_add_(x, 0, idx, src); }), Contains("scatter_add_: index 4"));
}

TEST_CASE("scatter, full and masked_fill refuse values the dtype cannot hold", "[indexing][factory][errors]") {
  const Tensor u = zeros({2, 3}, DType::UInt8);
  const Tensor idx = ints({0, 1}, {2, 1});
  // torch: "value cannot be converted to type uint8_t without overflow".
  REQUIRE_THAT(error_of([&] { scatter(u, 1, idx, 256.0); }),
               Contains("scatter: value 256 cannot be converted to uint8 without overflow"));
  REQUIRE_THAT(error_of([&] { scatter_(u, 1, idx, 256.0); }), Contains("scatter_: value 256"));
  // -1 wraps to 255 as an integer Scalar does.
  REQUIRE(to_vector<int64_t>(scatter(u, 1, idx, -1.0)) == std::vector<int64_t>{255, 0, 0, 0, 255, 0});
  REQUIRE_THAT(error_of([&] { full({2}, 256.0, DType::UInt8); }), Contains("full: value 256 cannot be converted"));
  REQUIRE_THAT(error_of([&] { full({2}, std::nan(""), DType::Int64); }), Contains("full: value nan cannot"));
  REQUIRE_THAT(error_of([&] { full({2}, 1e6, DType::Float16); }), Contains("to float16 without overflow"));
  REQUIRE_THAT(error_of([&] { full({2}, 1e300, DType::Float32); }), Contains("to float32 without overflow"));
  REQUIRE_THAT(error_of([&] { full_like(u, 300.0); }), Contains("full_like: value 300"));
  REQUIRE_THAT(error_of([&] { masked_fill(zeros({2}), ne(zeros({2}), 1.0), 1e300); }),
               Contains("masked_fill: value 1e+300"));
  // Infinities and NaN fit every float dtype; 65504 is float16's largest finite value.
  REQUIRE(std::isinf(full({1}, INFINITY, DType::Float16).item()));
  REQUIRE(std::isnan(full({1}, std::nan(""), DType::BFloat16).item()));
  REQUIRE(full({1}, 65504.0, DType::Float16).item() == 65504.0);
  REQUIRE(full({1}, -1.0, DType::UInt8).item() == 255.0);
}

TEST_CASE("index_put_ refuses a scalar value the dtype cannot hold", "[indexing][errors]") {
  const Tensor u = zeros({4}, DType::UInt8);
  // torch: x[idx] = -2.5 on uint8 raises "value cannot be converted to type uint8_t without overflow".
  REQUIRE_THAT(error_of([&] { index_put_(u, {ints({1}, {1})}, -2.5); }),
               Contains("index_put_: value -2.5 cannot be converted to uint8 without overflow"));
  index_put_(u, {ints({1}, {1})}, 7.0);
  REQUIRE(to_vector<int64_t>(u) == std::vector<int64_t>{0, 7, 0, 0});
}

TEST_CASE("index_add and index_select on a 0-d self have gradients of their inputs' shapes", "[indexing][grad]") {
  // torch: the source's gradient is grad.index_select(dim, index) expanded to the source's shape.
  const Variable x(scalar_tensor(5.0, DType::Float64), true);
  const Variable src(from_vector(std::vector<double>{2, 3}), true);
  const Variable y = index_add(x, 0, ints({0, 0}, {2}), src);
  REQUIRE(y.data().item() == 10.0);
  y.backward();
  REQUIRE(x.grad().shape() == Shape{});
  REQUIRE(x.grad().item() == 1.0);
  REQUIRE(src.grad().shape() == Shape{2});
  REQUIRE(to_vector<double>(src.grad()) == std::vector<double>{1, 1});
  // torch gives tensor(1.) for index [0]; for [0, 0] its backward raises, ddl's gives the same 1.
  for (int64_t n : {1, 2}) {
    const Variable z(scalar_tensor(4.0, DType::Float64), true);
    index_select(z, 0, ints(std::vector<int64_t>(static_cast<size_t>(n), 0), {n})).backward();
    REQUIRE(z.grad().shape() == Shape{});
    REQUIRE(z.grad().item() == 1.0);
  }
}
