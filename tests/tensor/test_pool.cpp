// Pooling tests: hand-computed cases, PyTorch golden values (from
// tests/golden/conv_pool.py), output-size rules (ceil_mode), gradient checks
// of max and average pooling, the 2x2 fast path against the general loop,
// unbatched input, error messages, and when max-pool windows are disjoint.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/common/golden_case.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::checksum;
using test::seq;

namespace {

Pool2dParams params(std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                    std::array<int64_t, 2> dil = {1, 1}, bool ceil_mode = false, bool include_pad = true) {
  Pool2dParams p;
  p.kernel = kernel, p.stride = stride, p.padding = pad, p.dilation = dil;
  p.ceil_mode = ceil_mode, p.count_include_pad = include_pad;
  return p;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// ---- golden values printed by tests/golden/conv_pool.py ----
// max_pool m1: x [1, 2, 5, 7], kernel (3, 2), stride (2, 2), padding (1, 1), dilation (1, 2), ceil_mode True; y shape
// [1, 2, 3, 4]
const std::vector<double> m1_y = {0.841470984808,   0.850436620629, 0.850436620629, 0.662969230082, 0.00796318378594,
                                  0.850436620629,   0.859161814856, 0.859161814856, 0.983906694619, 0.983906694619,
                                  -0.0088513092904, -0.34248061847, 0.359058354022, 0.980763247745, 0.980763247745,
                                  0.977342512392,   0.597760366905, 0.597760366905, 0.977342512392, 0.977342512392,
                                  0.899097240145,   0.899097240145, 0.584196584413, -0.700508791455};
const std::vector<double> m1_idx = {1, 10, 10, 12, 22, 10, 19, 19, 29, 29, 31, 26,
                                    1, 3,  3,  12, 22, 22, 12, 12, 29, 29, 31, 33};
const double m1_gx = 2.88948958695295;
// max_pool m2: x [2, 1, 6, 6], kernel (2, 2), stride (2, 2), padding (0, 0), dilation (1, 1), ceil_mode False; y shape
// [2, 1, 3, 3]
const std::vector<double> m2_y = {0.841470984808,   0.991664810452, 0.989358246623, 0.859161814856, 0.986771964275,
                                  0.00796318378594, 0.63742259615,  0.34331492882,  0.983906694619, 0.875881079811,
                                  0.980763247745,   0.977342512392, 0.891609873041, 0.973645455695, -0.0592607627034,
                                  0.584196584413,   0.405661876555, 0.969673122912};
const std::vector<double> m2_idx = {1, 2, 11, 19, 20, 22, 30, 27, 29, 1, 2, 11, 19, 20, 22, 30, 27, 29};
const double m2_gx = 2.11467935189516;
// max_pool m3: x [1, 1, 5, 5], kernel (2, 2), stride (2, 2), padding (1, 1), dilation (1, 1), ceil_mode True; y shape
// [1, 1, 3, 3]
const std::vector<double> m3_y = {0.295520206661, 0.991664810452, 0.675463180551, 0.850436620629, 0.989358246623,
                                  0.311541363513, 0.986771964275, 0.650287840157, 0.859161814856};
const std::vector<double> m3_idx = {0, 2, 3, 10, 11, 9, 20, 21, 19};
const double m3_gx = 0.306367229934857;
// avg_pool a3: x [1, 1, 5, 5], kernel (2, 2), stride (2, 2), padding (1, 1), ceil_mode True, count_include_pad False; y
// shape [1, 1, 3, 3]
const std::vector<double> a3_y = {0.295520206661,  0.91656789763,    0.358521921492,  0.119289364843, -0.0521643241699,
                                  -0.165657631189, 0.00291786710406, -0.143857608246, -0.108883858359};
const double a3_gx = 0.0766153750944591;
// avg_pool a1: x [1, 2, 5, 7], kernel (3, 3), stride (2, 2), padding (1, 1), ceil_mode True, count_include_pad True; y
// shape [1, 2, 3, 4]
const std::vector<double> a1_y = {
    -0.0133711254535, 0.366300032791, 0.289772227708, -0.100182594786,    -0.245009686174, -0.337858319036,
    0.126380362895,   0.281612527224, 0.2788668688,   -0.000192280240578, -0.426719664013, -0.204976472264,
    -0.200781433468,  0.158859623806, 0.423932253654, 0.0999111638424,    -0.109626241849, -0.382751617927,
    -0.113720948818,  0.195556268684, 0.319573882144, 0.255895102448,     -0.300702726234, -0.311818528531};
const double a1_gx = 0.628606949161739;
// avg_pool a2: x [1, 2, 5, 7], kernel (3, 3), stride (2, 2), padding (1, 1), ceil_mode True, count_include_pad False; y
// shape [1, 2, 3, 4]
const std::vector<double> a2_y = {
    -0.0300850322703, 0.549450049187, 0.434658341563, -0.225410838268,    -0.367514529261, -0.337858319036,
    0.126380362895,   0.422418790836, 0.627450454801, -0.000288420360867, -0.640079496019, -0.461197062595,
    -0.451758225304,  0.238289435709, 0.635898380481, 0.224800118645,     -0.164439362773, -0.382751617927,
    -0.113720948818,  0.293334403026, 0.719041234825, 0.383842653672,     -0.451054089351, -0.701591689195};
const double a2_gx = 1.89805956440293;
}  // namespace

TEST_CASE("pool: hand-computed 4x4 input") {
  const Tensor x = arange(0.0, 16.0, 1.0).reshape({1, 1, 4, 4});
  auto [y, idx] = max_pool2d_with_indices(x, Pool2dParams{});
  CHECK(to_vector<float>(y) == std::vector<float>{5, 7, 13, 15});
  CHECK(to_vector<int64_t>(idx) == std::vector<int64_t>{5, 7, 13, 15});
  CHECK(to_vector<float>(avg_pool2d(x, Pool2dParams{})) == std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});
  // Max gradient goes to the argmax only; average gradient is spread evenly.
  const Tensor g = from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  CHECK(to_vector<float>(max_pool2d_backward(g, idx, x.shape())) ==
        std::vector<float>{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  CHECK(to_vector<float>(avg_pool2d_backward(g, x.shape(), Pool2dParams{})) ==
        std::vector<float>{.25f, .25f, .5f, .5f, .25f, .25f, .5f, .5f, .75f, .75f, 1, 1, .75f, .75f, 1, 1});
}

TEST_CASE("pool: output sizes follow PyTorch, including ceil_mode") {
  CHECK(pool_out_size(32, 2, 2, 0, 1, false) == 16);
  CHECK(pool_out_size(5, 2, 2, 0, 1, false) == 2);
  CHECK(pool_out_size(5, 2, 2, 0, 1, true) == 3);
  // The last window would start in the right padding: dropped.
  CHECK(pool_out_size(5, 2, 2, 1, 1, true) == 3);
  CHECK(pool_out_size(6, 3, 3, 1, 1, true) == 3);
  CHECK(pool_out_size(7, 2, 2, 1, 2, true) == 4);
}

TEST_CASE("pool: golden values from PyTorch") {
  struct MaxCase {
    Shape xs;
    Pool2dParams p;
    const std::vector<double>*y, *idx;
    double gx;
  };
  const MaxCase max_cases[] = {
      {{1, 2, 5, 7}, params({3, 2}, {2, 2}, {1, 1}, {1, 2}, true), &m1_y, &m1_idx, m1_gx},
      {{2, 1, 6, 6}, params({2, 2}, {2, 2}, {0, 0}), &m2_y, &m2_idx, m2_gx},
      {{1, 1, 5, 5}, params({2, 2}, {2, 2}, {1, 1}, {1, 1}, true), &m3_y, &m3_idx, m3_gx},
  };
  struct AvgCase {
    Shape xs;
    Pool2dParams p;
    const std::vector<double>* y;
    double gx;
  };
  const AvgCase avg_cases[] = {
      {{1, 2, 5, 7}, params({3, 3}, {2, 2}, {1, 1}, {1, 1}, true, true), &a1_y, a1_gx},
      {{1, 2, 5, 7}, params({3, 3}, {2, 2}, {1, 1}, {1, 1}, true, false), &a2_y, a2_gx},
      {{1, 1, 5, 5}, params({2, 2}, {2, 2}, {1, 1}, {1, 1}, true, false), &a3_y, a3_gx},
  };
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-9 : 1e-6;
    for (const MaxCase& c : max_cases) {
      INFO("max_pool x " << c.xs << " " << dt);
      auto [y, idx] = max_pool2d_with_indices(seq(c.xs, 0.7, 0.3, 1.0).to(dt), c.p);
      CHECK(max_abs_diff(to_vector<double>(y), *c.y) < tol);
      CHECK(to_vector<double>(idx) == *c.idx);
      const Tensor gy = seq(y.shape(), 0.9, 0.1, 1.0).to(dt);
      CHECK(checksum(max_pool2d_backward(gy, idx, c.xs)) == Approx(c.gx).epsilon(tol * 10));
    }
    for (const AvgCase& c : avg_cases) {
      INFO("avg_pool x " << c.xs << " " << dt);
      const Tensor y = avg_pool2d(seq(c.xs, 0.7, 0.3, 1.0).to(dt), c.p);
      CHECK(max_abs_diff(to_vector<double>(y), *c.y) < tol);
      const Tensor gy = seq(y.shape(), 0.9, 0.1, 1.0).to(dt);
      CHECK(checksum(avg_pool2d_backward(gy, c.xs, c.p)) == Approx(c.gx).epsilon(tol * 10));
    }
  }
}

TEST_CASE("pool: gradient checks") {
  // random_double values are distinct, so max pooling has no ties (no kinks).
  auto check_max = [](const Shape& xs, const Pool2dParams& p, bool noncontig) {
    Tensor x = test::random_double(xs, 21);
    if (noncontig) x = test::non_contiguous(x);
    REQUIRE_GRADCHECK([p](const std::vector<Variable>& v) { return max_pool2d(v[0], p); }, {x});
  };
  auto check_avg = [](const Shape& xs, const Pool2dParams& p, bool noncontig) {
    Tensor x = test::random_double(xs, 22);
    if (noncontig) x = test::non_contiguous(x);
    REQUIRE_GRADCHECK([p](const std::vector<Variable>& v) { return avg_pool2d(v[0], p); }, {x});
  };
  SECTION("max 2x2") { check_max({2, 3, 6, 6}, params({2, 2}, {2, 2}, {0, 0}), false); }
  SECTION("max padded, dilated, ceil_mode") {
    check_max({2, 2, 7, 8}, params({3, 2}, {2, 2}, {1, 1}, {1, 2}, true), false);
  }
  SECTION("max overlapping, non-contiguous") { check_max({2, 3, 7, 7}, params({3, 3}, {1, 2}, {1, 0}), true); }
  SECTION("max convenience overload") {
    REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return max_pool2d(v[0], 2); },
                      {test::random_double({1, 2, 4, 6}, 3)});
  }
  SECTION("avg count_include_pad") {
    check_avg({2, 2, 7, 6}, params({3, 3}, {2, 2}, {1, 1}, {1, 1}, true, true), false);
  }
  SECTION("avg exclude pad, ceil_mode, non-contiguous") {
    check_avg({2, 2, 7, 6}, params({3, 2}, {2, 2}, {1, 1}, {1, 1}, true, false), true);
  }
  SECTION("avg unbatched") { check_avg({3, 5, 5}, params({2, 2}, {1, 1}, {0, 0}), false); }
}

TEST_CASE("pool: the 2x2 stride-2 fast path agrees with direct loops") {
  // Odd extents: the last row and column belong to no window. 37 columns make
  // 18 outputs per row: one full 16-wide vector and a ragged one. Ties (values
  // rounded to a coarse grid) keep the first maximum; a NaN always wins.
  for (const Shape& xs : {Shape{3, 4, 9, 11}, Shape{2, 3, 6, 37}}) {
    const int64_t H = xs[2], W = xs[3], P = H / 2, Q = W / 2, planes = xs[0] * xs[1];
    std::vector<float> xv = to_vector<float>(test::random_double(xs, 4).to(DType::Float32));
    for (float& v : xv) v = std::round(v * 4.0f) / 4.0f;
    xv[W + 3] = NAN;
    xv[H * W + 2 * W + 7] = NAN;
    const Tensor x = from_vector(xv, xs);
    auto [y, idx] = max_pool2d_with_indices(x, params({2, 2}, {2, 2}, {0, 0}));
    REQUIRE(y.shape() == Shape{xs[0], xs[1], P, Q});
    const std::vector<float> yv = to_vector<float>(y);
    const std::vector<int64_t> iv = to_vector<int64_t>(idx);
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          float m = -INFINITY;
          int64_t mi = -1;
          for (int64_t h = 2 * p; h < 2 * p + 2; ++h)
            for (int64_t w = 2 * q; w < 2 * q + 2; ++w) {
              const float v = xv[pl * H * W + h * W + w];
              if (mi < 0 || v > m || std::isnan(v)) m = v, mi = h * W + w;
            }
          const float got = yv[(pl * P + p) * Q + q];
          CHECK((got == m || (std::isnan(got) && std::isnan(m))));
          CHECK(iv[(pl * P + p) * Q + q] == mi);
        }
  }
}

TEST_CASE("pool: unbatched [C, H, W] input") {
  const Tensor x = test::random_double({3, 6, 6}, 1);
  auto [y, idx] = max_pool2d_with_indices(x, Pool2dParams{});
  REQUIRE(y.shape() == Shape{3, 3, 3});
  CHECK(to_vector<double>(y) == to_vector<double>(max_pool2d(x.unsqueeze(0), Pool2dParams{})));
  CHECK(max_pool2d_backward(y, idx, x.shape()).shape() == x.shape());
  CHECK(avg_pool2d(x, Pool2dParams{}).shape() == Shape{3, 3, 3});
}

TEST_CASE("pool: error messages name the op and the shapes") {
  REQUIRE_THROWS_WITH(max_pool2d(zeros({8, 8}), Pool2dParams{}), Catch::Contains("max_pool2d: input must be 4-D"));
  REQUIRE_THROWS_WITH(
      max_pool2d(zeros({1, 1, 4, 4}), params({2, 2}, {2, 2}, {2, 2})),
      Catch::Contains("max_pool2d: padding [2, 2] must be non-negative and at most half the kernel [2, 2]"));
  REQUIRE_THROWS_WITH(avg_pool2d(zeros({1, 1, 2, 2}), params({3, 3}, {1, 1}, {0, 0})),
                      Catch::Contains("avg_pool2d: input [1, 1, 2, 2] is too small for kernel [3, 3]"));
  REQUIRE_THROWS_WITH(avg_pool2d(zeros({1, 1, 4, 4}), params({2, 2}, {2, 2}, {0, 0}, {2, 2})),
                      Catch::Contains("avg_pool2d: dilation must be [1, 1]"));
  REQUIRE_THROWS_WITH(max_pool2d(zeros({1, 1, 4, 4}), params({2, 0}, {2, 2}, {0, 0})),
                      Catch::Contains("kernel, stride and dilation must be positive"));
  REQUIRE_THROWS_WITH(max_pool2d(zeros({1, 1, 4, 4}, DType::Int64), Pool2dParams{}),
                      Catch::Contains("max_pool2d: expected float32"));
  REQUIRE_THROWS_WITH(
      avg_pool2d_backward(zeros({1, 1, 3, 3}), {1, 1, 4, 4}, Pool2dParams{}),
      Catch::Contains("avg_pool2d_backward: grad_y [1, 1, 3, 3] does not match the output [1, 1, 2, 2]"));
  REQUIRE_THROWS_WITH(max_pool2d_backward(zeros({1, 1, 2, 2}), zeros({1, 1, 2, 2}), {1, 1, 4, 4}),
                      Catch::Contains("max_pool2d_backward: indices must be int64"));
}

TEST_CASE("pool: max_pool2d_windows_disjoint says when no two windows share an input") {
  // Note [Disjoint pooling windows]: the CUDA backward scatters without sorting when it holds.
  REQUIRE(max_pool2d_windows_disjoint(params({2, 2}, {2, 2}, {0, 0})));                // VGG
  REQUIRE_FALSE(max_pool2d_windows_disjoint(params({3, 3}, {2, 2}, {1, 1})));          // ResNet's stem
  REQUIRE(max_pool2d_windows_disjoint(params({2, 2}, {2, 2}, {0, 0}, {3, 3})));        // interleaved, never meeting
  REQUIRE_FALSE(max_pool2d_windows_disjoint(params({2, 2}, {3, 3}, {1, 1}, {2, 2})));  // padding with dilation
  REQUIRE_FALSE(max_pool2d_windows_disjoint(params({2, 2}, {0, 0}, {0, 0}, {0, 0})));  // invalid: no division by 0
  // Brute force along one dim (the 2-D answer is both dims'): a window's positions inside
  // the input; disjoint must mean no position in two windows and none empty, and for
  // dilation 1 or no padding, not disjoint must mean two windows meet on a long input.
  for (int64_t k = 1; k <= 4; ++k) {
    for (int64_t s = 1; s <= 7; ++s) {
      for (int64_t d = 1; d <= 3; ++d) {
        for (int64_t pad = 0; 2 * pad <= k; ++pad) {
          for (bool ceil : {false, true}) {
            const Pool2dParams p = params({k, k}, {s, s}, {pad, pad}, {d, d}, ceil);
            const bool disjoint = max_pool2d_windows_disjoint(p);
            bool ever_shared = false;
            for (int64_t n = 1; n <= 40; ++n) {
              const int64_t out = pool_out_size(n, k, s, pad, d, ceil);
              std::vector<int> owners(static_cast<size_t>(n), 0);
              bool empty = false;
              for (int64_t o = 0; o < out; ++o) {
                int inside = 0;
                for (int64_t j = 0; j < k; ++j) {
                  const int64_t at = o * s - pad + j * d;
                  if (at >= 0 && at < n) ++owners[static_cast<size_t>(at)], ++inside;
                }
                empty = empty || inside == 0;
              }
              bool shared = false;
              for (int c : owners) shared = shared || c > 1;
              ever_shared = ever_shared || shared;
              INFO("kernel " << k << " stride " << s << " dilation " << d << " pad " << pad << " ceil " << ceil << " n "
                             << n);
              if (disjoint) REQUIRE((!shared && !empty));
            }
            if (!disjoint && (pad == 0 || d == 1)) REQUIRE(ever_shared);
          }
        }
      }
    }
  }
}

TEST_CASE("pool: the max_pool2d backward given the params is the one without them") {
  for (const Pool2dParams& p : {params({2, 2}, {2, 2}, {0, 0}), params({3, 3}, {2, 2}, {1, 1})}) {
    const Tensor x = seq({2, 3, 9, 8}, 0.7, 0.3);
    const auto [y, idx] = max_pool2d_with_indices(x, p);
    const Tensor gy = seq(y.shape(), 0.9, 0.1);
    REQUIRE(allclose(max_pool2d_backward(gy, idx, x.shape(), p), max_pool2d_backward(gy, idx, x.shape()), 0, 0));
    REQUIRE_THROWS_WITH(max_pool2d_backward(zeros({2, 3, 2, 2}), idx, x.shape(), p),
                        Catch::Contains("max_pool2d_backward: grad_y [2, 3, 2, 2] does not match the output"));
  }
}
