// Pooling and resizing edge cases against PyTorch 1.13: adaptive average/max pooling and
// interpolate on bfloat16 (and float16) tensors, computed in float32 and rounded once
// (golden values from tests/golden/pool_edge.py; PyTorch's bfloat16 bilinear
// kernel rounds more often), their gradients in the input's dtype, and scale factors
// whose output size does not fit.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/golden_case.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::seq;

namespace {

// ---- golden values printed by tests/golden/pool_edge.py ----
// bf_adaptive_avg [1, 2, 3, 4] torch.bfloat16
const std::vector<double> bf_adaptive_avg = {
    -0.0908203125, 1.6484375,          1.3046875,   -0.67578125, -1.1015625, -1.015625,  0.376953125, 1.265625,
    1.8828125,     -0.000448226928711, -1.921875,   -1.3828125,  -1.3515625, 0.71484375, 1.90625,     0.67578125,
    -0.4921875,    -1.1484375,         -0.33984375, 0.87890625,  2.15625,    1.15625,    -1.3515625,  -2.109375};
// bf_adaptive_max [1, 2, 3, 4] torch.bfloat16
const std::vector<double> bf_adaptive_max = {
    2.53125,  2.96875,  2.96875,         1.9921875, 1.953125, 2.546875, 2.96875, 2.953125,
    2.953125, 2.953125, -0.026611328125, 1.03125,   1.078125, 2.9375,   2.9375,  2.9375,
    2.921875, 1.796875, 2.9375,          2.9375,    2.921875, 2.90625,  1.75,    -0.8359375};
// bf_adaptive_max_idx [1, 2, 3, 4] torch.int64
const std::vector<double> bf_adaptive_max_idx = {1, 2, 11, 12, 21, 10, 11, 20, 29, 29, 31, 27,
                                                 1, 3, 3,  12, 21, 22, 12, 12, 21, 30, 31, 27};
// bf_nearest [1, 2, 4, 9] torch.bfloat16
const std::vector<double> bf_nearest = {
    0.88671875,  0.88671875, 2.53125,      2.96875,       2.03125,     2.03125,       0.12451171875, -1.8359375,
    -2.9375,     -2.65625,   -2.65625,     -1.125,        0.93359375,  2.546875,      2.546875,      2.96875,
    1.9921875,   0.07421875, -1.875,       -1.875,        -2.9375,     -2.625,        -1.078125,     -1.078125,
    0.984375,    2.578125,   2.953125,     1.953125,      1.953125,    0.02392578125, -1.9140625,    -2.953125,
    -2.953125,   -2.609375,  -1.03125,     1.03125,       -0.98046875, -0.98046875,   1.078125,      2.625,
    2.9375,      2.9375,     1.875,        -0.0771484375, -1.9921875,  -2.96875,      -2.96875,      -2.546875,
    -0.93359375, 1.125,      1.125,        2.65625,       2.9375,      1.8359375,     -0.126953125,  -0.126953125,
    -2.03125,    -2.96875,   -2.515625,    -2.515625,     -0.8828125,  1.171875,      2.671875,      2.921875,
    2.921875,    1.796875,   -0.177734375, -2.0625,       -2.0625,     -2.984375,     -2.5,          -0.8359375};
// bf_bilinear [1, 2, 7, 4] torch.bfloat16
const std::vector<double> bf_bilinear = {
    1.234375,  2.8125,      1.890625,   -0.86328125, -0.5390625, 1.5078125,  2.234375,     0.8046875,
    -2.265625, -0.30078125, 1.984375,   2.34375,     -2.125,     -2.265625,  -0.349609375, 1.8984375,
    -0.25,     -1.96875,    -1.9375,    -0.046875,   1.7421875,  -0.6171875, -2.453125,    -1.921875,
    2.5,       1.734375,    -0.6015625, -2.34375,    -0.5390625, 2.078125,   2.859375,     0.890625,
    -1.703125, 0.28515625,  2.046875,   1.84375,     -2.46875,   -1.703125,  0.6171875,    2.34375,
    -0.921875, -2.453125,   -1.796875,  0.5859375,   1.1015625,  -1.03125,   -2.25,        -1.3203125,
    2.484375,  0.9296875,   -1.4765625, -2.484375,   1.71875,    2.484375,   1.015625,     -1.421875};
// bf_bilinear_ac [1, 2, 3, 8] torch.bfloat16
const std::vector<double> bf_bilinear_ac = {
    0.88671875,   2.296875, 2.84375,  2.4375,   1.2265625,    -0.41796875, -1.984375,    -2.921875,
    -1.875,       -2.78125, -2.71875, -1.75,    -0.208984375, 1.421875,    2.625,        2.953125,
    2.609375,     2.90625,  2.21875,  0.8125,   -0.83984375,  -2.234375,   -2.90625,     -2.578125,
    -0.98046875,  0.78125,  2.1875,   2.8125,   2.484375,     1.328125,    -0.330078125, -1.96875,
    -0.126953125, -1.75,    -2.6875,  -2.71875, -1.828125,    -0.3125,     1.375,        2.65625,
    1.21875,      2.484375, 2.84375,  2.25,     0.91796875,   -0.74609375, -2.203125,    -2.984375};

// Every element of got within atol + rtol |want| of want.
void require_close(const Tensor& got_t, const std::vector<double>& want, double rtol, double atol) {
  const std::vector<double> got = to_vector<double>(got_t.to(DType::Float64));
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i]));
  }
}

InterpolateOptions sized(std::array<int64_t, 2> s, InterpolateMode m, bool align_corners = false) {
  InterpolateOptions o;
  o.size = s, o.mode = m, o.align_corners = align_corners;
  return o;
}

}  // namespace

TEST_CASE("adaptive pools and interpolate: bfloat16 as PyTorch") {
  const Tensor x = seq({1, 2, 5, 7}, 0.7, 0.3, 3.0).to(DType::BFloat16);
  const Tensor avg = adaptive_avg_pool2d(x, {3, 4});
  REQUIRE(avg.dtype() == DType::BFloat16);
  require_close(avg, bf_adaptive_avg, 1e-9, 0);
  const auto [mx, idx] = adaptive_max_pool2d(x, {3, 4});
  REQUIRE(mx.dtype() == DType::BFloat16);
  require_close(mx, bf_adaptive_max, 1e-9, 0);
  CHECK(to_vector<double>(idx) == bf_adaptive_max_idx);
  const Variable xv(x);
  const Variable near = interpolate(xv, sized({4, 9}, InterpolateMode::Nearest));
  REQUIRE(near.dtype() == DType::BFloat16);
  require_close(near.data(), bf_nearest, 1e-9, 0);
  // PyTorch 1.13's bfloat16 bilinear CPU kernel rounds its intermediates to bfloat16 (up
  // to 0.035 from the exact values here, |x| <= 3); ddl rounds once, so it stays within
  // half a bfloat16 step (2^-8 relative) of the float64 result and within 0.04 of PyTorch.
  InterpolateOptions scaled;
  scaled.scale_factor = std::array<double, 2>{1.5, 0.7}, scaled.mode = InterpolateMode::Bilinear;
  const InterpolateOptions corners = sized({3, 8}, InterpolateMode::Bilinear, true);
  const Variable x64(x.to(DType::Float64));
  for (const auto& [opts, want] : {std::pair{scaled, &bf_bilinear}, std::pair{corners, &bf_bilinear_ac}}) {
    const Tensor y = interpolate(xv, opts).data();
    REQUIRE(y.dtype() == DType::BFloat16);
    require_close(y, to_vector<double>(interpolate(x64, opts).data()), 0x1p-8, 1e-6);
    require_close(y, *want, 0, 0.04);
  }
}

TEST_CASE("adaptive pools and interpolate: 16-bit gradients are the float32 ones rounded once") {
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    INFO(dt);
    const Tensor x = seq({2, 3, 5, 6}, 0.7, 0.3).to(dt);
    using Op = std::function<Variable(const Variable&)>;
    const Op ops[] = {
        [](const Variable& v) {
          return adaptive_avg_pool2d(v, {3, 4});
        },
        [](const Variable& v) {
          return adaptive_max_pool2d(v, {2, 4});
        },
        [](const Variable& v) {
          return interpolate(v, sized({7, 9}, InterpolateMode::Nearest));
        },
        [](const Variable& v) {
          return interpolate(v, sized({4, 11}, InterpolateMode::Bilinear));
        },
    };
    for (const Op& op : ops) {
      Variable v16(x, true), v32(x.to(DType::Float32), true);
      const Variable y16 = op(v16), y32 = op(v32);
      REQUIRE(y16.dtype() == dt);
      CHECK(to_vector<float>(y16.data().to(DType::Float32)) == to_vector<float>(y32.data().to(dt).to(DType::Float32)));
      const Tensor g = seq(y16.shape(), 0.9, 0.1).to(dt);
      y16.backward(g);
      y32.backward(g.to(DType::Float32));
      REQUIRE(v16.grad().dtype() == dt);
      CHECK(to_vector<float>(v16.grad().to(DType::Float32)) == to_vector<float>(v32.grad().to(dt).to(DType::Float32)));
    }
  }
}

TEST_CASE("interpolate: a scale factor whose output size does not fit is refused") {
  InterpolateOptions o;
  o.scale_factor = std::array<double, 2>{1e300, 2.0};
  REQUIRE_THROWS_WITH(interpolate(Variable(zeros({1, 1, 4, 4})), o),
                      Catch::StartsWith("interpolate: ") && Catch::Contains("too large"));
}

TEST_CASE("avg_pool2d: int64 as PyTorch, sums divided with truncation") {
  // tests/golden/pool_edge.py
  const Tensor x = (arange(25) - 12.0).to(DType::Int64).reshape({1, 1, 5, 5});
  REQUIRE(x.dtype() == DType::Int64);
  Pool2dParams p;
  p.kernel = {3, 3}, p.stride = {2, 2}, p.padding = {1, 1};
  const Tensor y = avg_pool2d(x, p);
  REQUIRE(y.dtype() == DType::Int64);
  CHECK(to_vector<int64_t>(y) == std::vector<int64_t>{-4, -5, -2, -1, 0, 1, 2, 5, 4});
  p.count_include_pad = false;
  CHECK(to_vector<int64_t>(avg_pool2d(x, p)) == std::vector<int64_t>{-9, -7, -6, -1, 0, 1, 6, 7, 9});
  Pool2dParams c;
  c.ceil_mode = true;
  CHECK(to_vector<int64_t>(avg_pool2d(x, c)) == std::vector<int64_t>{-9, -7, -5, 1, 3, 4, 8, 10, 12});
  // PyTorch has no int32, uint8 or bool average pooling.
  for (DType dt : {DType::Int32, DType::UInt8, DType::Bool})
    REQUIRE_THROWS_WITH(avg_pool2d(x.to(dt), p), Catch::StartsWith("avg_pool2d: "));
}

TEST_CASE("max pooling: of two NaNs in a window the last one is the maximum, as PyTorch") {
  // tests/golden/pool_edge.py. float32 2x2/2 takes the vector loop (AVX-512 builds),
  // float64 the scalar fast loop, the others the general loop and the adaptive kernel.
  const Tensor x64 = from_vector<double>({NAN, 1, NAN, 5, 2, NAN, 3, 4}, {1, 1, 2, 4});
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    INFO(dt);
    const Tensor x = x64.to(dt);
    auto indices = [&](std::array<int64_t, 2> k, std::array<int64_t, 2> s, std::array<int64_t, 2> pad) {
      Pool2dParams p;
      p.kernel = k, p.stride = s, p.padding = pad;
      const auto [y, idx] = max_pool2d_with_indices(x, p);
      for (double v : to_vector<double>(y.to(DType::Float64))) CHECK(std::isnan(v));
      return to_vector<int64_t>(idx);
    };
    CHECK(indices({2, 2}, {2, 2}, {0, 0}) == std::vector<int64_t>{5, 2});
    CHECK(indices({2, 2}, {1, 1}, {0, 0}) == std::vector<int64_t>{5, 5, 2});
    CHECK(indices({2, 3}, {1, 1}, {0, 1}) == std::vector<int64_t>{5, 5, 5, 2});
    CHECK(to_vector<int64_t>(adaptive_max_pool2d(x, {1, 2}).second) == std::vector<int64_t>{5, 2});
  }
}

TEST_CASE("max pooling with indices and interpolate: errors name the function called; uint8 nearest") {
  const Tensor xi = zeros({2, 3, 6, 6}, DType::Int64);
  Pool2dParams p;
  p.kernel = {2, 2};
  p.stride = {2, 2};
  REQUIRE_THROWS_WITH(max_pool2d_with_indices(xi, p), Catch::StartsWith("max_pool2d_with_indices: "));
  REQUIRE_THROWS_WITH(max_pool2d(xi, p), Catch::StartsWith("max_pool2d: "));
  REQUIRE_THROWS_WITH(max_pool2d(Variable(xi), p), Catch::StartsWith("max_pool2d: "));
  REQUIRE_THROWS_WITH(adaptive_max_pool2d_with_indices(Variable(xi), {3, 3}),
                      Catch::StartsWith("adaptive_max_pool2d_with_indices: "));
  REQUIRE_THROWS_WITH(adaptive_max_pool2d(Variable(xi), {3, 3}), Catch::StartsWith("adaptive_max_pool2d: "));
  // interpolate: PyTorch 1.13 resizes uint8 with nearest only, and no other integer input.
  InterpolateOptions o;
  o.scale_factor = std::array<double, 2>{2.0, 2.0};
  o.mode = InterpolateMode::Bilinear;
  for (DType dt : {DType::Int64, DType::Int32, DType::UInt8, DType::Bool})
    REQUIRE_THROWS_WITH(interpolate(Variable(zeros({1, 2, 3, 4}, dt)), o), Catch::StartsWith("interpolate: "));
  o.mode = InterpolateMode::Nearest;
  REQUIRE_THROWS_WITH(interpolate(Variable(zeros({1, 2, 3, 4}, DType::Int64)), o), Catch::StartsWith("interpolate: "));
  o.align_corners = true;
  REQUIRE_THROWS_WITH(interpolate(Variable(zeros({1, 2, 3, 4})), o), Catch::StartsWith("interpolate: align_corners"));
  o.align_corners = false;
  const Tensor u = from_vector<double>({0, 7, 200, 255}, {1, 1, 2, 2}).to(DType::UInt8);
  const Variable y = interpolate(Variable(u), o);
  REQUIRE(y.dtype() == DType::UInt8);
  CHECK(to_vector<uint8_t>(y.data()) ==
        std::vector<uint8_t>{0, 0, 7, 7, 0, 0, 7, 7, 200, 200, 255, 255, 200, 200, 255, 255});
}

TEST_CASE("adaptive pooling: a zero output size gives an empty output, as PyTorch 1.13") {
  const Variable x(ones({2, 3, 6, 6}), true);
  CHECK(adaptive_avg_pool2d(x, {0, 2}).shape() == Shape{2, 3, 0, 2});
  CHECK(adaptive_max_pool2d(x, {2, 0}).shape() == Shape{2, 3, 2, 0});
  const auto [y, idx] = adaptive_max_pool2d_with_indices(x, {0, 0});
  CHECK(y.shape() == Shape{2, 3, 0, 0});
  CHECK(idx.shape() == Shape{2, 3, 0, 0});
  REQUIRE_THROWS_WITH(adaptive_avg_pool2d(x, {-1, 2}), Catch::StartsWith("adaptive_avg_pool2d: "));
}
