// conv2d's float32 Winograd path (tensor/cpu/winograd.cpp: 3x3, stride 1, >= 64
// channels) against the direct im2col path (float64 never takes Winograd) and PyTorch
// 1.13 golden values (tests/golden/conv_winograd.py): with a bias, where odd output
// sizes clip the tiles, and with inf/NaN operands, whose NaN and inf pattern must be
// the direct path's. Each case runs with F(2x2, 3x3) and with F(4x4, 3x3).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/common/golden_case.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/cpu/winograd.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::checksum;
using test::seq;

namespace {

// ---- golden values printed by tests/golden/conv_winograd.py ----
// wb1: x [2, 64, 5, 7], w [64, 64, 3, 3], padding 1; y [2, 64, 5, 7]; wb1_y0 is y[-1, :2] (the clipped tiles)
const std::vector<double> wb1_y0 = {
    0.694208482011, 0.672401586615, 0.673984346869, 0.72488079993,  0.801153548643, 0.866930327494, 0.86949211929,
    0.831600384316, 0.876819719855, 0.80411163098,  0.719516339898, 0.662820333844, 0.660688630364, 0.672637102241,
    0.848589608134, 0.872854908166, 0.903497121828, 0.875509583996, 0.80205527103,  0.717680894075, 0.663582936057,
    0.752092550998, 0.715924772665, 0.800063165289, 0.87421841238,  0.903514142524, 0.874172116075, 0.842043767535,
    0.712967914191, 0.725557200758, 0.761601131172, 0.805751211685, 0.837242969567, 0.841265339013, 0.842893986108,
    1.94867781047,  1.93258094812,  1.8981389912,   1.90376351857,  1.94680922712,  2.00703104752,  2.00271131801,
    2.1662992029,   2.18883512306,  2.07680873506,  1.92081765902,  1.79422693543,  1.75657415963,  1.81203142686,
    2.04884239159,  2.11880372939,  2.20513224171,  2.1871435157,   2.07329793029,  1.91713884318,  1.88505435793,
    1.82479792309,  1.82835931269,  1.97258837145,  2.12186920767,  2.20599271149,  2.18539428461,  2.11796871065,
    1.9390692668,   1.93020082504,  1.89583139634,  1.90261374985,  1.94735803874,  2.00902032479,  2.0292727598};
const double wb1_y = 15.0630324204692;
const double wb1_gx = 1.07256248989254;
const double wb1_gw = 12.2773214810334;
const double wb1_gb = -0.740065933252494;
// wb2: x [1, 64, 6, 5], w [80, 64, 3, 3], padding 0; y [1, 80, 4, 3]; wb2_y0 is y[-1, :2] (the clipped tiles)
const std::vector<double> wb2_y0 = {1.00621904963,  1.04693586002,  0.961561439057, 0.514616848226, 0.539931685551,
                                    0.67760727693,  1.04631518501,  0.958185877219, 0.785705841736, 0.542092460204,
                                    0.681836182139, 0.867200756064, 1.9734702456,   2.14720379982,  2.24386476709,
                                    1.89922522484,  1.75625223626,  1.72007728986,  2.15070924446,  2.24475171275,
                                    2.21584328642,  1.75394648138,  1.72078607331,  1.81110399803};
const double wb2_y = 176.178188084965;
const double wb2_gx = 0.130162770060442;
const double wb2_gw = -0.0481553944947386;
const double wb2_gb = 1.37881879381265;
// inf at x[0, 3, 2, 2]: y nan 0 inf 576 of 2304; one-hot gy: gx nan 0, gw nan 576 inf 0

Conv2dParams pad(int64_t p) {
  Conv2dParams c;
  c.padding = {p, p};
  return c;
}

Tensor f32(const Tensor& t) { return t.to(DType::Float32); }

// Every element of got within tol (relative to the largest finite |expect|) of expect;
// NaN exactly where expect is NaN, and an inf exactly where expect has the same inf.
void require_same_pattern(const std::vector<double>& got, const std::vector<double>& expect, double tol) {
  REQUIRE(got.size() == expect.size());
  double scale = 1;
  for (double e : expect)
    if (std::isfinite(e)) scale = std::max(scale, std::abs(e));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expect[i]);
    if (std::isnan(expect[i])) {
      REQUIRE(std::isnan(got[i]));
    } else if (std::isinf(expect[i])) {
      REQUIRE(got[i] == expect[i]);
    } else {
      REQUIRE(std::abs(got[i] - expect[i]) <= tol * scale);
    }
  }
}
void require_same_pattern(const Tensor& got, const Tensor& expect, double tol) {
  require_same_pattern(to_vector<double>(got), to_vector<double>(expect), tol);
}

int64_t count(const Tensor& t, bool (*pred)(double)) {
  int64_t n = 0;
  for (double v : to_vector<double>(t)) n += pred(v);
  return n;
}
bool is_nan(double v) { return std::isnan(v); }
bool is_inf(double v) { return std::isinf(v); }

// Forces one Winograd tile size for a test's lifetime (winograd.h).
struct TileMode {
  explicit TileMode(cpu::winograd::Mode m) { cpu::winograd::set_mode(m); }
  ~TileMode() { cpu::winograd::set_mode(cpu::winograd::Mode::automatic); }
};

}  // namespace

TEST_CASE("conv2d Winograd: a bias agrees with the direct path and PyTorch") {
  const auto mode = GENERATE(cpu::winograd::Mode::f2, cpu::winograd::Mode::f4);
  const TileMode tiles(mode);
  const int m = mode == cpu::winograd::Mode::f4 ? 4 : 2;
  INFO("Winograd F(" << m << "x" << m << ", 3x3)");
  struct Case {
    Shape xs, ws;
    int64_t padding;
    const std::vector<double>* y0;
    double y, gx, gw, gb;
  };
  const Case cases[] = {
      {{2, 64, 5, 7}, {64, 64, 3, 3}, 1, &wb1_y0, wb1_y, wb1_gx, wb1_gw, wb1_gb},
      {{1, 64, 6, 5}, {80, 64, 3, 3}, 0, &wb2_y0, wb2_y, wb2_gx, wb2_gw, wb2_gb},
  };
  for (const Case& c : cases) {
    INFO("x " << c.xs << " w " << c.ws);
    const Conv2dParams p = pad(c.padding);
    const Tensor x = seq(c.xs, 0.7, 0.3), w = seq(c.ws, 0.5, 0.2, 0.05), b = seq({c.ws[0]}, 1.3, 0.4, 2.0);
    const Tensor y64 = conv2d(x, w, b, p);  // im2col
    const Tensor y32 = conv2d(f32(x), f32(w), f32(b), p);
    require_same_pattern(y32, y64, 1e-5);
    CHECK(checksum(y64) == Approx(c.y).epsilon(1e-9));
    CHECK(checksum(y32.to(DType::Float64)) == Approx(c.y).epsilon(1e-5));
    // The last image's first two channels, element by element (the odd size clips tiles).
    require_same_pattern(to_vector<double>(y32.select(0, c.xs[0] - 1).narrow(0, 0, 2)), *c.y0, 1e-5);

    // Through autograd: the gradients PyTorch gives, float32 and float64.
    for (DType dt : {DType::Float32, DType::Float64}) {
      INFO(dt);
      Variable xv(x.to(dt), true), wv(w.to(dt), true), bv(b.to(dt), true);
      const Variable y = conv2d(xv, wv, bv, p);
      require_same_pattern(y.data(), y64, 1e-5);
      y.backward(seq(y.shape(), 0.9, 0.1).to(dt));
      const double tol = dt == DType::Float64 ? 1e-9 : 1e-4;
      CHECK(checksum(xv.grad().to(DType::Float64)) == Approx(c.gx).margin(tol).epsilon(tol));
      CHECK(checksum(wv.grad().to(DType::Float64)) == Approx(c.gw).margin(tol).epsilon(tol));
      CHECK(checksum(bv.grad().to(DType::Float64)) == Approx(c.gb).margin(tol).epsilon(tol));
    }
  }
}

// Winograd's transforms add and subtract neighbouring inputs before multiplying, so one
// inf would meet another (inf - inf) or a zero (0 * inf) that a direct sum never forms.
TEST_CASE("conv2d Winograd: inf and NaN operands give the direct path's NaN and inf") {
  const auto mode = GENERATE(cpu::winograd::Mode::f2, cpu::winograd::Mode::f4);
  const TileMode tiles(mode);
  const int m = mode == cpu::winograd::Mode::f4 ? 4 : 2;
  INFO("Winograd F(" << m << "x" << m << ", 3x3)");
  const double inf = INFINITY;
  const Conv2dParams p = pad(1);
  const Shape xs{2, 64, 6, 7}, ws{64, 64, 3, 3};
  const Tensor x0 = test::random_double(xs, 1), w0 = test::random_double(ws, 2, -0.1, 0.1);
  const Tensor gy0 = test::random_double({2, 64, 6, 7}, 3);
  auto with = [](const Tensor& t, const std::vector<TensorIndex>& at, double v) {
    Tensor c = t.clone();
    c.index_put_(at, v);
    return c;
  };
  struct Case {
    const char* what;
    Tensor x, w, gy;
  };
  const Case cases[] = {
      {"inf in x", with(x0, {0, 3, 2, 2}, inf), w0, gy0},
      {"-inf in x at a corner", with(x0, {1, 63, 5, 6}, -inf), w0, gy0},
      {"NaN in x", with(x0, {1, 10, 0, 3}, NAN), w0, gy0},
      {"inf in w", x0, with(w0, {5, 7, 1, 2}, inf), gy0},
      {"inf in gy", x0, w0, with(gy0, {0, 9, 4, 4}, inf)},
      {"one-hot gy with inf in x", with(x0, {0, 3, 2, 2}, inf), w0, with(zeros_like(gy0), {0, 0, 0, 0}, 1.0)},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    require_same_pattern(conv2d(f32(c.x), f32(c.w), Tensor(), p), conv2d(c.x, c.w, Tensor(), p), 1e-5);
    require_same_pattern(conv2d_backward_input(f32(c.gy), f32(c.w), xs, p), conv2d_backward_input(c.gy, c.w, xs, p),
                         1e-5);
    require_same_pattern(conv2d_backward_weight(f32(c.gy), f32(c.x), ws, p), conv2d_backward_weight(c.gy, c.x, ws, p),
                         1e-5);
  }
}

// The check runs as images are staged, chunk by chunk (in parallel when there are
// several): an inf in the last image, in the last chunk, still sends every product to im2col.
// 64 channels (Winograd's minimum) and 20 images of 16x16: the forward and input gradient
// take 2 chunks at F(4x4) and 5 at F(2x2), F(2x2)'s weight gradient 2.
TEST_CASE("conv2d Winograd: an inf in the last chunk's last image") {
  const auto mode = GENERATE(cpu::winograd::Mode::f2, cpu::winograd::Mode::f4);
  const TileMode tiles(mode);
  INFO("Winograd F(" << (mode == cpu::winograd::Mode::f4 ? 4 : 2) << "x..., 3x3)");
  const Conv2dParams p = pad(1);
  const Shape xs{20, 64, 16, 16}, ws{64, 64, 3, 3};
  Tensor x = test::random_double(xs, 4), gy = test::random_double(xs, 5);
  const Tensor w = test::random_double(ws, 6, -0.1, 0.1);
  x.index_put_({19, 63, 7, 8}, INFINITY);
  gy.index_put_({19, 2, 15, 15}, -INFINITY);
  require_same_pattern(conv2d(f32(x), f32(w), Tensor(), p), conv2d(x, w, Tensor(), p), 1e-5);
  require_same_pattern(conv2d_backward_input(f32(gy), f32(w), xs, p), conv2d_backward_input(gy, w, xs, p), 1e-5);
  require_same_pattern(conv2d_backward_weight(f32(gy), f32(x), ws, p), conv2d_backward_weight(gy, x, ws, p), 1e-5);
}

TEST_CASE("conv2d Winograd: an inf input as PyTorch counts it") {
  const auto mode = GENERATE(cpu::winograd::Mode::f2, cpu::winograd::Mode::f4);
  const TileMode tiles(mode);
  const int m = mode == cpu::winograd::Mode::f4 ? 4 : 2;
  INFO("Winograd F(" << m << "x" << m << ", 3x3)");
  // tests/golden/conv_winograd.py: y has 576 infs and no NaN; with a one-hot gy the
  // weight gradient has 576 NaNs (0 * inf) and no inf, the input gradient no NaN.
  Tensor x = seq({1, 64, 6, 6}, 0.7, 0.3);
  x.index_put_({0, 3, 2, 2}, INFINITY);
  const Tensor w = seq({64, 64, 3, 3}, 0.5, 0.2, 0.05);
  Variable xv(f32(x), true), wv(f32(w), true);
  const Variable y = conv2d(xv, wv, Variable(), pad(1));
  CHECK(count(y.data(), is_nan) == 0);
  CHECK(count(y.data(), is_inf) == 576);
  Tensor gy = zeros(y.shape(), DType::Float32);
  gy.index_put_({0, 0, 0, 0}, 1.0);
  y.backward(gy);
  CHECK(count(xv.grad(), is_nan) == 0);
  CHECK(count(wv.grad(), is_nan) == 576);
  CHECK(count(wv.grad(), is_inf) == 0);
}
