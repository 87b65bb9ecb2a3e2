// conv2d tests: a hand-computed case, PyTorch golden values (from
// tests/golden/conv_pool.py), a direct-loop reference over many shapes,
// gradient checks through autograd, float32 vs float64 on a VGG layer,
// thread-count independence, unbatched input and error messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/common/golden_case.h"
#include "tests/common/gradcheck.h"
#include "tests/common/values.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using ddl::test::params;
using test::checksum;
using test::seq;

namespace {

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}

// Direct loops: y = conv(x, w) and, for a cotangent gy, gx and gw.
// x: [N, C, H, W], w: [K, C/G, R, S], y/gy: [N, K, P, Q]
struct Reference {
  Shape y_shape;
  std::vector<double> y, gx, gw;
};

Reference reference(const Tensor& xt, const Tensor& wt, const Conv2dParams& p, uint64_t seed) {
  const Shape xs = xt.shape(), ws = wt.shape();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], K = ws[0], Cg = ws[1], R = ws[2], S = ws[3];
  const int64_t P = conv_out_size(H, R, p.stride[0], p.padding[0], p.dilation[0]);
  const int64_t Q = conv_out_size(W, S, p.stride[1], p.padding[1], p.dilation[1]);
  const int64_t Kg = K / p.groups;
  const std::vector<double> x = to_vector<double>(xt), w = to_vector<double>(wt);
  const std::vector<double> gy = to_vector<double>(test::random_double({N, K, P, Q}, seed));
  Reference ref{
      {N, K, P, Q}, std::vector<double>(N * K * P * Q), std::vector<double>(x.size()), std::vector<double>(w.size())};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < P; ++oh)
        for (int64_t ow = 0; ow < Q; ++ow) {
          const int64_t yi = ((n * K + k) * P + oh) * Q + ow;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                const int64_t ih = oh * p.stride[0] - p.padding[0] + r * p.dilation[0];
                const int64_t iw = ow * p.stride[1] - p.padding[1] + s * p.dilation[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const int64_t xi = ((n * C + k / Kg * Cg + c) * H + ih) * W + iw;
                const int64_t wi = ((k * Cg + c) * R + r) * S + s;
                ref.y[yi] += x[xi] * w[wi];
                ref.gx[xi] += gy[yi] * w[wi];
                ref.gw[wi] += gy[yi] * x[xi];
              }
        }
  return ref;
}

// Checks conv2d and both gradients in `dt` against the reference.
void check_against_reference(const Shape& xs, const Shape& ws, const Conv2dParams& p, DType dt, double tol) {
  const Tensor x = test::random_double(xs, 11), w = test::random_double(ws, 12);
  const Reference ref = reference(x, w, p, 13);
  const Tensor gy = test::random_double(ref.y_shape, 13).to(dt);
  const Tensor y = conv2d(x.to(dt), w.to(dt), Tensor(), p);
  REQUIRE(y.shape() == ref.y_shape);
  const Tensor gx = conv2d_backward_input(gy, w.to(dt), xs, p);
  const Tensor gw = conv2d_backward_weight(gy, x.to(dt), ws, p);
  CHECK(max_abs_diff(to_vector<double>(y), ref.y) <= tol * (1 + max_abs(ref.y)));
  CHECK(max_abs_diff(to_vector<double>(gx), ref.gx) <= tol * (1 + max_abs(ref.gx)));
  CHECK(max_abs_diff(to_vector<double>(gw), ref.gw) <= tol * (1 + max_abs(ref.gw)));
}

// ---- golden values printed by tests/golden/conv_pool.py ----
// conv c1: x [2, 3, 7, 6], w [4, 3, 3, 2], stride (2, 1), padding (1, 2), dilation (1, 2), groups 1
// y shape [2, 4, 4, 8]
const std::vector<double> c1_y = {
    0.785996121059,  1.01330562534,    1.14673830312,    1.08472433287,   0.558334942387,    -0.184860712919,
    0.0689110098165, -0.520772875475,  -0.129319996937,  -0.44956216817,  -0.0839441031046,  -0.457482431764,
    -0.5700722416,   -0.368760785783,  -0.564736596797,  -0.033649714376, -0.280470866164,   0.127151361769,
    -0.360579913944, 0.0630340093852,  0.502789435971,   0.751862517322,  0.939152868053,    0.910773953466,
    0.9120029686,    0.451784635837,   0.717453050321,   0.0232811882728, -0.636052797594,   -0.950453831349,
    -0.73612277525,  -0.746395916471,  -0.149640250653,  -0.594918629628, -0.612961285276,   -0.840755257159,
    -0.55653003055,  0.106038829334,   -0.0884806640196, 0.540871114216,  -0.0850119849661,  0.478701512175,
    0.0251236118628, 0.877340146486,   1.43352876528,    1.43210527015,   1.36725635228,     0.823419320819,
    1.06474868503,   0.803882434227,   1.42463269317,    0.855236464458,  0.000208026960556, -0.738319384981,
    -0.705600061452, -0.951903023787,  -0.647052308491,  -0.406933879691, -0.645150620587,   -0.116989107147,
    0.582793075275,  1.12507743189,    0.856178249123,   1.12315321289,   0.0710898972893,   0.655193605107,
    0.554639346453,  1.03175327922,    1.04021025939,    0.576032837053,  0.67672630816,     0.119567292409,
    0.868636478005,  0.161645796682,   0.622564833809,   -0.556857386278, -1.45778814025,    -1.65650561708,
    -1.34235818301,  -0.882432311645,  -1.07537613348,   -1.0076320906,   -1.65106950687,    -1.03709516024,
    0.0812339815276, 1.17795024868,    0.931036766317,   1.40824384605,   0.851497406793,    0.874157405726,
    1.04258195428,   0.77430594021,    0.15845447981,    -0.51532786215,  -0.23965455262,    -0.715879348697,
    0.10326001056,   -0.515850739007,  -0.314572027319,  -0.956203940458, -1.25583998819,    -1.07255665531,
    -1.06152689936,  -0.67558979773,   -1.41470590503,   -0.690098192926, -1.07643485862,    0.220563159275,
    1.30610508809,   1.66964359663,    1.16203404676,    0.867766318966,  0.978030864596,    1.11544982032,
    1.66721016458,   1.11778517881,    -0.0650734313108, -1.32504877877,  -0.907827410609,   -1.53112007134,
    -0.821433728624, -1.10284457895,   -1.17154124411,   -1.21083396764,  -0.788374345272,   -0.102851738518,
    -0.336301145166, 0.264529537404,   0.907929921426,   0.992357836801,  1.18468686022,     0.9509774409,
    0.315795854493,  -0.422122073924,  -0.146219828171,  -0.664592128091, -0.25830989645,    -0.503857442161,
    -0.229618000553, -0.530180694994,  -0.535603741474,  -0.243336596495, -0.410566560914,   0.173395669528,
    -0.154639115609, 0.271371391901,   -0.233569334745,  0.220271010107,  0.616301839881,    0.768263667181,
    0.977330688099,  0.808811988294,   0.792271634354,   0.245212820646,  0.501821454423,    -0.219692674064,
    -0.792094522342, -0.94617455714,   -0.787815545438,  -0.655008956962, -0.333734860247,   -0.661127517384,
    -0.744984066389, -0.800514075078,  -0.362950941994,  0.361912554262,  0.120012306511,    0.735705010853,
    0.0999164493003, 0.656778888744,   0.320843099318,   1.11493541094,   1.50125504134,     1.29810983193,
    1.23478855285,   0.561654516413,   1.01731802096,    0.646768712004,  1.28621372108,     0.580631630108,
    -0.281431725236, -0.894534478823,  -0.849656094778,  -0.905834564439, -0.611630709275,   -0.246185814679,
    -0.505334235091, 0.115362134517,   0.798400753565,   1.22253788674,   0.987846343255,    1.12115543772,
    0.284624436625,  0.796791236123,   0.757270691611,   1.09217025365,   0.929997815984,    0.347025610053,
    0.511928636467,  -0.0916515735083, 0.660638592032,   -0.108562302825, 0.229360783158,    -0.917119594102,
    -1.61567155965,  -1.53775520892,   -1.25513737734,   -0.612474025967, -1.11477685729,    -0.865549986978,
    -1.52584465749,  -0.693930611688,  0.48094257997,    1.44621369755,   1.15536656901,     1.42625707637,
    0.9066813591,    0.787804367772,   1.00343167031,    0.593875307213,  -0.0783971562104,  -0.697205475866,
    -0.427895352608, -0.803625841383,  -0.101760941338,  -0.707669624512, -0.551796347366,   -1.10654059001,
    -1.24858329189,  -0.911119550823,  -0.969715578355,  -0.485527893131, -1.22060800266,    -0.37578601656,
    -0.655634126792, 0.639459494341,   1.52608353457,    1.58724485389,   1.13556281515,     0.637596796317,
    1.09725991226,   1.01365293399,    1.57743683705,    0.767054803183,  -0.511806879067,   -1.65767957777,
    -1.17255872104,  -1.61001332919,   -0.957414865674,  -1.10623491179,  -1.24001561264,    -1.11439358952,
    -0.572376637251, 0.13111620226,    -0.124945460516,  0.426424282292};
const double c1_gx = -11.2729277425462;
const double c1_gw = 7.82590169788026;
const double c1_gb = 1.19555105788789;
// conv c2: x [1, 4, 5, 5], w [6, 2, 3, 3], stride (1, 1), padding (1, 1), dilation (2, 2), groups 2
// y shape [1, 6, 3, 3]
const std::vector<double> c2_y = {
    -1.27582548762,  -1.82757452241,  -1.52677301065,  2.18682210038,   2.4999640198,   1.74490332704,  -0.871655008039,
    -0.667633752212, -0.125985217474, 1.85928014485,   2.26157826259,   1.77251596683,  -1.49586056621, -1.48268473083,
    -0.699964570785, 0.591795709963,  0.171986171766,  -0.213078870943, -1.52786482615, -1.7092077701,  -1.11881036663,
    1.12342805532,   0.786276331193,  0.115016975153,  0.377651544454,  0.938632637586, 1.09867292926,  -0.894709343588,
    -0.573004024744, -0.101797347781, -0.917570131358, -1.67943385979,  -1.79737867843, 1.20406026368,  1.73730869381,
    1.39728639267,   -0.162851800628, -0.666878735083, -0.941956849542, 1.29826857574,  2.07660373254,  1.86239623439,
    -1.78046485103,  -2.14899432869,  -1.63457180085,  0.819453139464,  1.41621620619,  1.44627351816,  -1.8202280551,
    -2.47669375717,  -1.96840707075,  1.66839593668,   1.80670422554,   1.20931466165};
const double c2_gx = -6.41387278025388;
const double c2_gw = -17.8762721093963;
const double c2_gb = 0.894800520257285;
}  // namespace

TEST_CASE("conv2d: hand-computed 3x3 input with a 2x2 kernel") {
  const Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Tensor w = from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  const Tensor b = from_vector<float>({0.5f}, {1});
  const Tensor y = conv2d(x, w, b);
  REQUIRE(y.shape() == Shape{1, 1, 2, 2});
  // y[0,0] = 1*1 + 2*2 + 4*3 + 5*4 = 37, then 47, 67, 77; plus bias.
  CHECK(to_vector<float>(y) == std::vector<float>{37.5f, 47.5f, 67.5f, 77.5f});
  // Padding 1, stride 2: windows start at (-1,-1), (-1,1), (1,-1), (1,1):
  // 4*1; 3*2 + 4*3; 2*4 + 4*7; 1*5 + 2*6 + 3*8 + 4*9.
  const Tensor y2 = conv2d(x, w, Tensor(), params({2, 2}, {1, 1}, {1, 1}));
  CHECK(to_vector<float>(y2) == std::vector<float>{4, 18, 36, 77});
}

TEST_CASE("conv2d: golden values from PyTorch") {
  struct Case {
    Shape xs, ws;
    Conv2dParams p;
    const std::vector<double>* y;
    double gx, gw, gb;
  };
  const Case cases[] = {
      {{2, 3, 7, 6}, {4, 3, 3, 2}, params({2, 1}, {1, 2}, {1, 2}), &c1_y, c1_gx, c1_gw, c1_gb},
      {{1, 4, 5, 5}, {6, 2, 3, 3}, params({1, 1}, {1, 1}, {2, 2}, 2), &c2_y, c2_gx, c2_gw, c2_gb},
  };
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-9 : 2e-5;
    for (const Case& c : cases) {
      const Tensor x = seq(c.xs, 0.7, 0.3, 1.0).to(dt), w = seq(c.ws, 0.5, 0.2, 0.5).to(dt);
      const Tensor b = seq({c.ws[0]}, 1.3, 0.4, 0.25).to(dt);
      const Tensor y = conv2d(x, w, b, c.p);
      CHECK(max_abs_diff(to_vector<double>(y), *c.y) < tol);
      const Tensor gy = seq(y.shape(), 0.9, 0.1, 1.0).to(dt);
      CHECK(checksum(conv2d_backward_input(gy, w, c.xs, c.p)) == Approx(c.gx).epsilon(tol * 10));
      CHECK(checksum(conv2d_backward_weight(gy, x, c.ws, c.p)) == Approx(c.gw).epsilon(tol * 10));
      CHECK(checksum(conv2d_backward_bias(gy)) == Approx(c.gb).epsilon(tol * 10));
    }
  }
}

TEST_CASE("conv2d: forward and gradients match direct loops") {
  struct Case {
    Shape xs, ws;
    Conv2dParams p;
  };
  const Case cases[] = {
      {{2, 3, 9, 8}, {5, 3, 3, 3}, params({1, 1}, {1, 1}, {1, 1})},
      {{3, 4, 7, 7}, {6, 4, 1, 1}, params({1, 1}, {0, 0}, {1, 1})},      // pointwise, several images per GEMM
      {{1, 4, 6, 5}, {4, 2, 1, 1}, params({1, 1}, {0, 0}, {1, 1}, 2)},   // pointwise, one image, groups
      {{2, 6, 11, 9}, {6, 2, 3, 2}, params({3, 2}, {2, 0}, {2, 3}, 3)},  // stride, dilation, groups 3
      {{5, 2, 20, 20}, {3, 2, 3, 3}, params({1, 1}, {1, 1}, {1, 1})},    // 3 chunks of 2, 2, 1 images
      {{40, 3, 4, 4}, {4, 3, 3, 3}, params({1, 1}, {1, 1}, {1, 1})},     // 16 images per chunk, 3 parts
      {{2, 2, 5, 5}, {3, 2, 5, 5}, params({2, 2}, {2, 2}, {1, 1})},      // kernel as big as the input
      // 3x3 stride 1 with >= 128 channels: the float32 Winograd path (odd sizes, every padding).
      {{2, 128, 5, 7}, {128, 128, 3, 3}, params({1, 1}, {1, 1}, {1, 1})},
      {{1, 128, 7, 6}, {129, 128, 3, 3}, params({1, 1}, {0, 0}, {1, 1})},
      {{1, 130, 5, 6}, {128, 130, 3, 3}, params({1, 1}, {2, 1}, {1, 1})},
  };
  for (const Case& c : cases) {
    INFO("x " << c.xs << " w " << c.ws);
    check_against_reference(c.xs, c.ws, c.p, DType::Float64, 1e-12);
    check_against_reference(c.xs, c.ws, c.p, DType::Float32, 1e-5);
  }
}

TEST_CASE("conv2d: gradient checks") {
  auto check = [](const Shape& xs, const Shape& ws, const Conv2dParams& p, bool bias, bool noncontig) {
    Tensor x = test::random_double(xs, 1), w = test::random_double(ws, 2), b = test::random_double({ws[0]}, 3);
    if (noncontig) x = test::non_contiguous(x), w = test::non_contiguous(w);
    INFO("x " << xs << " w " << ws << " bias " << bias << " non-contiguous " << noncontig);
    if (bias) {
      REQUIRE_GRADCHECK([p](const std::vector<Variable>& v) { return conv2d(v[0], v[1], v[2], p); }, {x, w, b});
    } else {
      REQUIRE_GRADCHECK([p](const std::vector<Variable>& v) { return conv2d(v[0], v[1], Variable(), p); }, {x, w});
    }
  };
  SECTION("stride 2 and padding") { check({2, 3, 7, 6}, {4, 3, 3, 3}, params({2, 2}, {1, 1}, {1, 1}), true, false); }
  SECTION("dilation 2, asymmetric") { check({1, 2, 8, 7}, {3, 2, 3, 2}, params({1, 2}, {2, 1}, {2, 2}), true, false); }
  SECTION("groups 2, no bias") { check({2, 4, 5, 5}, {6, 2, 3, 3}, params({1, 1}, {1, 1}, {1, 1}, 2), false, false); }
  SECTION("non-contiguous inputs") { check({2, 3, 6, 6}, {2, 3, 3, 3}, params({2, 1}, {0, 1}, {1, 1}), true, true); }
  SECTION("pointwise 1x1") { check({3, 3, 4, 4}, {2, 3, 1, 1}, params({1, 1}, {0, 0}, {1, 1}), true, false); }
  SECTION("several chunks: weight and bias") {
    // 3 chunks of 2, 2 and 1 images; the input gradient here is covered by the direct-loop test.
    test::GradcheckOptions opts;
    opts.skip_inputs = {0};
    const Conv2dParams p = params({1, 1}, {1, 1}, {1, 1});
    REQUIRE_GRADCHECK(
        [p](const std::vector<Variable>& v) { return conv2d(v[0], v[1], v[2], p); },
        {test::random_double({5, 1, 20, 20}, 1), test::random_double({2, 1, 3, 3}, 2), test::random_double({2}, 3)},
        opts);
  }
  SECTION("unbatched input") { check({2, 5, 5}, {3, 2, 2, 2}, params({1, 1}, {1, 1}, {1, 1}), true, false); }
}

TEST_CASE("conv2d: float32 agrees with float64 on VGG layers") {
  // float32 takes Winograd (tensor/cpu/winograd.cpp), float64 im2col: a second
  // opinion. 128 -> 128 at 8x8 with 70 images makes 5 forward chunks; 64 -> 64
  // at 15x15 (odd: clipped tiles) with 24 images makes 2 weight-gradient chunks,
  // so dU accumulates across chunks; 512 -> 512 at 2x2 is one tile per image.
  struct Case {
    Shape xs, ws;
  };
  for (const Case& c : {Case{{70, 128, 8, 8}, {128, 128, 3, 3}}, Case{{24, 64, 15, 15}, {64, 64, 3, 3}},
                        Case{{9, 512, 2, 2}, {512, 512, 3, 3}}}) {
    INFO("x " << c.xs << " w " << c.ws);
    const Conv2dParams p = params({1, 1}, {1, 1}, {1, 1});
    const Tensor x = test::random_double(c.xs, 5), w = test::random_double(c.ws, 6, -0.05, 0.05);
    const Tensor gy = test::random_double({c.xs[0], c.ws[0], c.xs[2], c.xs[3]}, 7);
    auto rel = [](const Tensor& f, const Tensor& d) {
      return max_abs_diff(to_vector<double>(f), to_vector<double>(d)) / max_abs(to_vector<double>(d));
    };
    const Tensor xf = x.to(DType::Float32), wf = w.to(DType::Float32), gyf = gy.to(DType::Float32);
    CHECK(rel(conv2d(xf, wf, Tensor(), p), conv2d(x, w, Tensor(), p)) < 1e-5);
    CHECK(rel(conv2d_backward_input(gyf, wf, c.xs, p), conv2d_backward_input(gy, w, c.xs, p)) < 1e-5);
    CHECK(rel(conv2d_backward_weight(gyf, xf, c.ws, p), conv2d_backward_weight(gy, x, c.ws, p)) < 1e-5);
  }
}

TEST_CASE("conv2d: results do not depend on the thread count") {
  const int threads = get_num_threads();
  struct Case {
    Shape xs, ws;
  };
  // Several im2col chunks and weight-gradient parts; several Winograd chunks.
  for (const Case& c : {Case{{40, 8, 8, 8}, {16, 8, 3, 3}}, Case{{70, 128, 8, 8}, {128, 128, 3, 3}}}) {
    const Conv2dParams p = params({1, 1}, {1, 1}, {1, 1});
    const Tensor x = test::random_double(c.xs, 8).to(DType::Float32);
    const Tensor w = test::random_double(c.ws, 9).to(DType::Float32);
    const Shape ys{c.xs[0], c.ws[0], c.xs[2], c.xs[3]};
    const Tensor gy = test::random_double(ys, 10).to(DType::Float32);
    std::vector<std::vector<float>> runs[2];
    for (int t : {1, 2}) {
      set_num_threads(t);
      runs[t - 1] = {to_vector<float>(conv2d(x, w, Tensor(), p)),
                     to_vector<float>(conv2d_backward_input(gy, w, c.xs, p)),
                     to_vector<float>(conv2d_backward_weight(gy, x, c.ws, p))};
    }
    CHECK(runs[0] == runs[1]);
  }
  set_num_threads(threads);
}

TEST_CASE("conv2d: unbatched [C, H, W] input") {
  const Tensor x = test::random_double({3, 6, 6}, 1), w = test::random_double({4, 3, 3, 3}, 2);
  const Tensor y = conv2d(x, w, Tensor(), params({1, 1}, {1, 1}, {1, 1}));
  REQUIRE(y.shape() == Shape{4, 6, 6});
  const Tensor yb = conv2d(x.unsqueeze(0), w, Tensor(), params({1, 1}, {1, 1}, {1, 1}));
  CHECK(to_vector<double>(y) == to_vector<double>(yb));
}

// Shapes whose reduction C/groups*R*S (or image) is empty but whose output is
// not: the frontend fills y = bias without a kernel (cuDNN rejects C = 0).
TEST_CASE("conv2d: empty reduction gives the bias and zero gradients") {
  struct Case {
    Shape xs, ws;
    Conv2dParams p;
  };
  const Case cases[] = {
      {{2, 0, 5, 4}, {3, 0, 3, 3}, params({1, 1}, {1, 1}, {1, 1})},  // no input channels
      {{1, 2, 0, 3}, {3, 2, 1, 1}, params({1, 1}, {1, 1}, {1, 1})},  // empty image, windows only on padding
  };
  for (const DType dt : {DType::Float64, DType::Float32}) {
    for (const Case& c : cases) {
      INFO("x " << c.xs << " w " << c.ws << " " << dt);
      const Tensor x = zeros(c.xs, dt), w = zeros(c.ws, dt), b = seq({c.ws[0]}, 0.7, 0.2, 1.0).to(dt);
      const Tensor y = conv2d(x, w, b, c.p);
      REQUIRE(y.numel() > 0);
      const int64_t K = y.size(1), pq = y.size(2) * y.size(3);
      const std::vector<double> yv = to_vector<double>(y), bv = to_vector<double>(b);
      for (int64_t i = 0; i < y.numel(); ++i) REQUIRE(yv[i] == bv[i / pq % K]);
      CHECK(to_vector<double>(conv2d(x, w, Tensor(), c.p)) == std::vector<double>(yv.size(), 0.0));
      // The CPU kernel, which the frontend no longer calls here, agrees.
      const Tensor yk = empty(y.shape(), dt);
      kernels::conv2d_forward_kernel(Device::cpu())(x, w, b, yk, c.p);
      CHECK(to_vector<double>(yk) == yv);

      // Gradients: zeros of the input and weight shapes (empty where they are empty), bias gets sum(gy).
      Variable xv(x, true), wv(w, true), bv_(b, true);
      const Tensor gy = seq(y.shape(), 0.3, 0.1, 1.0).to(dt);
      conv2d(xv, wv, bv_, c.p).backward(gy);
      REQUIRE(xv.grad().shape() == c.xs);
      REQUIRE(wv.grad().shape() == c.ws);
      CHECK(to_vector<double>(xv.grad()) == std::vector<double>(size_t(x.numel()), 0.0));
      CHECK(to_vector<double>(wv.grad()) == std::vector<double>(size_t(w.numel()), 0.0));
      CHECK(to_vector<double>(bv_.grad()) == to_vector<double>(sum(gy, {0, 2, 3})));
    }
  }
}

TEST_CASE("conv2d: error messages name the op and the shapes") {
  const Tensor x = zeros({2, 3, 8, 8}), w = zeros({4, 2, 3, 3});
  REQUIRE_THROWS_WITH(
      conv2d(x, w, Tensor()),
      Catch::Contains("conv2d: input [2, 3, 8, 8] has 3 channels but weight [4, 2, 3, 3] expects 2 (groups=1)"));
  REQUIRE_THROWS_WITH(conv2d(zeros({3, 8}), zeros({4, 3, 3, 3}), Tensor()),
                      Catch::Contains("conv2d: input must be 4-D"));
  REQUIRE_THROWS_WITH(conv2d(x, zeros({4, 3, 3}), Tensor()), Catch::Contains("weight must be 4-D"));
  REQUIRE_THROWS_WITH(conv2d(zeros({1, 3, 2, 2}), zeros({4, 3, 3, 3}), Tensor()),
                      Catch::Contains("bigger than the padded input [1, 3, 2, 2]"));
  Conv2dParams g2;
  g2.groups = 2;
  REQUIRE_THROWS_WITH(conv2d(x, zeros({4, 1, 3, 3}), Tensor(), g2), Catch::Contains("groups=2 does not divide the 3"));
  REQUIRE_THROWS_WITH(conv2d(zeros({2, 4, 8, 8}), zeros({3, 2, 3, 3}), Tensor(), g2),
                      Catch::Contains("does not divide the 3 output channels"));
  REQUIRE_THROWS_WITH(conv2d(x, zeros({4, 3, 3, 3}, DType::Float64), Tensor()), Catch::Contains("dtypes must match"));
  REQUIRE_THROWS_WITH(conv2d(x, zeros({4, 3, 3, 3}), zeros({5})), Catch::Contains("conv2d: bias must be [4]"));
  REQUIRE_THROWS_WITH(conv2d(zeros({2, 3, 8, 8}, DType::Bool), zeros({4, 3, 3, 3}, DType::Bool), Tensor()),
                      Catch::Contains("conv2d: expected a float or integer tensor"));
  Conv2dParams s0;
  s0.stride = {0, 1};
  REQUIRE_THROWS_WITH(conv2d(x, zeros({4, 3, 3, 3}), Tensor(), s0), Catch::Contains("stride must be positive"));
  REQUIRE_THROWS_WITH(
      conv2d_backward_input(zeros({2, 4, 5, 5}), zeros({4, 3, 3, 3}), {2, 3, 8, 8}, {}),
      Catch::Contains("conv2d_backward_input: grad_y [2, 4, 5, 5] does not match the output [2, 4, 6, 6]"));
}
