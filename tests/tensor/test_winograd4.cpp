// Winograd F(4x4, 3x3) (tensor/cpu/winograd4_tiles.inc) beside F(2x2): the gradients
// its backward computes match central differences of its own forward (so the input
// gradient's flipped-kernel transform and the weight gradient's adjoint transforms are
// the adjoints of the forward's), and the documented choice of tile per shape.
#include <catch2/catch.hpp>
#include <cmath>

#include <ddl/tensor/cpu/winograd.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
namespace wg = ddl::cpu::winograd;

namespace {

struct TileMode {
  explicit TileMode(wg::Mode m) { wg::set_mode(m); }
  ~TileMode() { wg::set_mode(wg::Mode::automatic); }
};

// sum(y * c) in float64, y a float32 result.
double dot(const Tensor& y, const Tensor& c) {
  return sum(mul(y.to(DType::Float64), c.to(DType::Float64))).item<double>();
}

}  // namespace

TEST_CASE("Winograd gradients agree with central differences of its forward") {
  const auto mode = GENERATE(wg::Mode::f2, wg::Mode::f4);
  const TileMode tiles(mode);
  INFO("Winograd F(" << (mode == wg::Mode::f4 ? 4 : 2) << "), padding 1 on a 6x7 map: partial tiles");
  Generator gen(11);
  const Tensor x = randn({1, 64, 6, 7}, gen), w = randn({64, 64, 3, 3}, gen);
  Conv2dParams p;
  p.padding = {1, 1};
  const Tensor c = randn({1, 64, 6, 7}, gen);  // a random cotangent: f = sum(conv(x, w) * c)
  const Tensor gx = conv2d_backward_input(c, w, x.shape(), p), gw = conv2d_backward_weight(c, x, w.shape(), p);
  // f is linear in each operand, so a step of 1 has no truncation error and the least
  // rounding error; the float32 forward's own error (~1e-5 relative) leaves the
  // difference quotient within ~1e-4 of a gradient of size ~10.
  auto check = [&](const Tensor& operand, const Tensor& grad, bool is_x) {
    const int64_t n = operand.numel();
    double scale = 0;
    for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(double(grad.data<float>()[i])));
    for (int64_t k = 0; k < 12; ++k) {
      const int64_t i = (k * 7919 + 13) % n;  // spread over images, channels, borders
      Tensor plus = operand.clone(), minus = operand.clone();
      plus.data<float>()[i] += 1.0f;
      minus.data<float>()[i] -= 1.0f;
      const double fd = is_x ? (dot(conv2d(plus, w, Tensor(), p), c) - dot(conv2d(minus, w, Tensor(), p), c)) / 2
                             : (dot(conv2d(x, plus, Tensor(), p), c) - dot(conv2d(x, minus, Tensor(), p), c)) / 2;
      INFO((is_x ? "x" : "w") << " element " << i << ": difference " << fd << ", backward " << grad.data<float>()[i]);
      REQUIRE(std::abs(fd - grad.data<float>()[i]) <= 1e-4 * scale);
    }
  };
  check(x, gx, true);
  check(w, gw, false);
}

TEST_CASE("Winograd picks F(4x4) where it multiplies at most 3/4 of F(2x2)'s points") {
  // See Note [Winograd tile size]: 36 points per 4x4 tile against 16 per 2x2 tile.
  auto tile = [](int64_t P, int64_t Q) { return wg::tile_size({64, 64, P, Q, 64, P, Q, 1, 1}); };
  for (int64_t side : {3, 4, 7, 8, 16, 32}) CHECK(tile(side, side) == 4);
  for (int64_t side : {1, 2, 5, 6}) CHECK(tile(side, side) == 2);
  CHECK(tile(2, 32) == 2);  // 8 tiles of 4x4 against 16 of 2x2
  CHECK(tile(4, 32) == 4);
  {
    const TileMode forced(wg::Mode::f2);
    CHECK(tile(16, 16) == 2);
  }
  {
    const TileMode forced(wg::Mode::f4);
    CHECK(tile(2, 2) == 4);
  }
  CHECK(tile(16, 16) == 4);
}
