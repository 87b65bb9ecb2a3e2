// Adaptive average / max pooling and 2-D interpolation (nearest, bilinear with
// and without align_corners, from a size or a scale factor): PyTorch golden
// values (tests/golden/conv_losses.py) for shrinking, growing and odd sizes,
// finite-difference gradient checks, agreement of AdaptiveAvgPool2d's fast
// paths with the general kernel, module behaviour and errors.
#include <catch2/catch.hpp>
#include <vector>

#include "tests/common/golden_seq.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/pool_layers.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::checksum;
using test::require_close;
using test::seq;

namespace {

// Golden values, pasted from tests/golden/conv_losses.py.
// adaptive pools ad1: x [2, 3, 7, 5] -> (3, 4)
const std::vector<double> ad1_avg = {
    0.231233008352,   0.27074641643,    0.182923554331,   0.00906888637134,   0.270077711155,   0.179482840621,
    0.00447438564573, -0.172638442812,  0.175991382223,   -0.000121380110552, -0.176177055481,  -0.269373908817,
    0.100282788507,   0.240505233717,   0.267614309513,   0.168860193956,     0.24265488785,    0.266641520891,
    0.165222480267,   -0.013903274498,  0.265593345449,   0.161538053685,     -0.0184911088293, -0.189823613929,
    -0.0694950228969, 0.11714499118,    0.248689885464,   0.263272040728,     0.121280699458,   0.250561667214,
    0.261999567745,   0.150214977709,   0.252362608357,   0.260653020349,     0.146354244055,   -0.0367772200657,
    -0.212365680994,  -0.0515715676132, 0.133477459844,   0.255749952294,     -0.0470510729071, 0.137469093613,
    0.257335397394,   0.256172842803,   0.141421861126,   0.258848086768,     0.254534012591,   0.130508615088,
    -0.273012379772,  -0.200320594659,  -0.0334149037814, 0.149206338467,     -0.19716556324,   -0.0288489027955,
    0.153035847411,   0.262945447329,   -0.0242747454392, 0.156822088953,     0.264163044498,   0.247263992554,
    -0.227953869014,  -0.271509291105,  -0.187369651139,  -0.015107136511,    -0.270941291232,  -0.18399715182,
    -0.0105162768718, 0.16791056741,    -0.180572631495,  -0.00592244399474,  0.171513161457,   0.268283447108};
const double ad1_avg_gx = 0.335139804732929;
const std::vector<double> ad1_max = {
    0.989358246623, 0.991664810452, 0.991664810452, 0.675463180551, 0.989358246623, 0.989358246623, 0.662969230082,
    0.859161814856, 0.986771964275, 0.650287840157, 0.867644100642, 0.983906694619, 0.883870423546, 0.977342512392,
    0.980763247745, 0.980763247745, 0.973645455695, 0.977342512392, 0.977342512392, 0.611155146263, 0.973645455695,
    0.973645455695, 0.597760366905, 0.899097240145, 0.570467633637, 0.913307331512, 0.960907198946, 0.96542663713,
    0.920026038197, 0.956116086128, 0.960907198946, 0.960907198946, 0.951054653254, 0.956116086128, 0.956116086128,
    0.542529799027, 0.94572433133,  0.513978455988, 0.938614229734, 0.940126627383, 0.510190008002, 0.944281811366,
    0.944281811366, 0.940126627383, 0.949682418814, 0.949682418814, 0.944281811366, 0.934263124035, 0.95481452518,
    0.921745424907, 0.552907653012, 0.959676679476, 0.915094768221, 0.566839549101, 0.96426750704,  0.96426750704,
    0.580611184212, 0.96858570992,  0.96858570992,  0.96426750704,  0.972630067242, 0.972630067242, 0.893598351367,
    0.607658143449, 0.976399435557, 0.88592481646,  0.620925820662, 0.97989274916,  0.878000806481, 0.634017945236,
    0.983109020398, 0.983109020398};
const std::vector<double> ad1_idx = {11, 2,  2,  3,  11, 11, 12, 19, 20, 21, 28, 29, 11, 12, 3,  3,  21, 12,
                                     12, 13, 21, 21, 22, 29, 5,  12, 13, 4,  21, 22, 13, 13, 31, 22, 22, 23,
                                     5,  6,  13, 14, 21, 22, 22, 14, 31, 31, 22, 23, 5,  6,  13, 14, 15, 22,
                                     23, 23, 31, 32, 32, 23, 6,  6,  7,  14, 15, 16, 23, 24, 25, 32, 33, 33};
const double ad1_max_gx = 0.175188530692573;
// adaptive pools ad2: x [1, 2, 3, 4] -> (5, 7)
const std::vector<double> ad2_avg = {
    0.295520206661,   0.568495595735,   0.841470984808,    0.91656789763,   0.991664810452,   0.833563995502,
    0.675463180551,   0.168550434547,   0.14167849074,     0.114806546933,  0.0609369466631,  0.00706734639369,
    -0.0484641955954, -0.103995737585,  0.0415806624333,   -0.285138614255, -0.611857890943,  -0.794694004304,
    -0.977530117665,  -0.930492386693,  -0.88345465572,    -0.166148001198, -0.158153132457,  -0.150158263715,
    -0.106852506116,  -0.0635467485183, -0.00529747653333, 0.0529517954516, -0.37387666483,   -0.0311676506584,
    0.311541363513,   0.580988992071,   0.850436620629,    0.919897433626,  0.989358246623,   0.662969230082,
    0.343872327768,   0.0247754254534,  -0.30014761172,    -0.625070648893, -0.80300343948,   -0.980936230066,
    -0.106241472303,  -0.136484200347,  -0.166726928392,   -0.157762516635, -0.148798104878,  -0.104842656241,
    -0.060887207605,  -0.875452174688,  -0.616840728463,   -0.358229282237, -0.0153774215496, 0.327474439138,
    0.593318126997,   0.859161814856,   0.0556598947931,   0.100844586877,  0.14602927896,    0.156874045211,
    0.167718811462,   0.139123188858,   0.110527566254,    0.986771964275,  0.818529902216,   0.650287840157,
    0.329125511972,   0.00796318378594, -0.315071749281,   -0.638106682348};
const double ad2_avg_gx = 0.27144682146564;
const std::vector<double> ad2_max = {
    0.295520206661,  0.841470984808,   0.841470984808,   0.991664810452,  0.991664810452,  0.991664810452,
    0.675463180551,  0.295520206661,   0.841470984808,   0.841470984808,  0.991664810452,  0.991664810452,
    0.991664810452,  0.675463180551,   0.0415806624333,  0.0415806624333, -0.611857890943, -0.611857890943,
    -0.977530117665, -0.88345465572,   -0.88345465572,   0.0415806624333, 0.311541363513,  0.311541363513,
    0.850436620629,  0.850436620629,   0.989358246623,   0.989358246623,  -0.37387666483,  0.311541363513,
    0.311541363513,  0.850436620629,   0.850436620629,   0.989358246623,  0.989358246623,  0.662969230082,
    0.662969230082,  0.0247754254534,  0.0247754254534,  -0.625070648893, -0.625070648893, -0.980936230066,
    0.662969230082,  0.662969230082,   0.0247754254534,  0.327474439138,  0.327474439138,  0.859161814856,
    0.859161814856,  -0.875452174688,  -0.358229282237,  -0.358229282237, 0.327474439138,  0.327474439138,
    0.859161814856,  0.859161814856,   0.986771964275,   0.986771964275,  0.650287840157,  0.650287840157,
    0.327474439138,  0.859161814856,   0.859161814856,   0.986771964275,  0.986771964275,  0.650287840157,
    0.650287840157,  0.00796318378594, 0.00796318378594, -0.638106682348};
const std::vector<double> ad2_idx = {0,  1,  1,  2,  2, 2, 3, 0,  1,  1,  2,  2, 2, 3, 4, 4, 5, 5, 6, 7,  7,  4, 9, 9,
                                     10, 10, 11, 11, 8, 9, 9, 10, 10, 11, 11, 0, 0, 1, 1, 2, 2, 3, 0, 0,  1,  6, 6, 7,
                                     7,  4,  5,  5,  6, 6, 7, 7,  8,  8,  9,  9, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11};
const double ad2_max_gx = 0.198935381183215;
// interpolate n1: x [1, 2, 3, 4], mode nearest, size (5, 7), scale None, align_corners None; y shape [1, 2, 5, 7]
const std::vector<double> n1_y = {
    0.295520206661,  0.295520206661,   0.841470984808,   0.841470984808,  0.991664810452,  0.991664810452,
    0.675463180551,  0.295520206661,   0.295520206661,   0.841470984808,  0.841470984808,  0.991664810452,
    0.991664810452,  0.675463180551,   0.0415806624333,  0.0415806624333, -0.611857890943, -0.611857890943,
    -0.977530117665, -0.977530117665,  -0.88345465572,   0.0415806624333, 0.0415806624333, -0.611857890943,
    -0.611857890943, -0.977530117665,  -0.977530117665,  -0.88345465572,  -0.37387666483,  -0.37387666483,
    0.311541363513,  0.311541363513,   0.850436620629,   0.850436620629,  0.989358246623,  0.662969230082,
    0.662969230082,  0.0247754254534,  0.0247754254534,  -0.625070648893, -0.625070648893, -0.980936230066,
    0.662969230082,  0.662969230082,   0.0247754254534,  0.0247754254534, -0.625070648893, -0.625070648893,
    -0.980936230066, -0.875452174688,  -0.875452174688,  -0.358229282237, -0.358229282237, 0.327474439138,
    0.327474439138,  0.859161814856,   -0.875452174688,  -0.875452174688, -0.358229282237, -0.358229282237,
    0.327474439138,  0.327474439138,   0.859161814856,   0.986771964275,  0.986771964275,  0.650287840157,
    0.650287840157,  0.00796318378594, 0.00796318378594, -0.638106682348};
const double n1_gx = -0.0570543513731545;
// interpolate n2: x [1, 2, 5, 3], mode nearest, size None, scale (1.5, 2.0), align_corners None; y shape [1, 2, 7, 6]
const std::vector<double> n2_y = {
    0.295520206661,  0.295520206661,  0.841470984808,   0.841470984808,   0.991664810452,  0.991664810452,
    0.295520206661,  0.295520206661,  0.841470984808,   0.841470984808,   0.991664810452,  0.991664810452,
    0.675463180551,  0.675463180551,  0.0415806624333,  0.0415806624333,  -0.611857890943, -0.611857890943,
    -0.977530117665, -0.977530117665, -0.88345465572,   -0.88345465572,   -0.37387666483,  -0.37387666483,
    -0.977530117665, -0.977530117665, -0.88345465572,   -0.88345465572,   -0.37387666483,  -0.37387666483,
    0.311541363513,  0.311541363513,  0.850436620629,   0.850436620629,   0.989358246623,  0.989358246623,
    0.662969230082,  0.662969230082,  0.0247754254534,  0.0247754254534,  -0.625070648893, -0.625070648893,
    -0.980936230066, -0.980936230066, -0.875452174688,  -0.875452174688,  -0.358229282237, -0.358229282237,
    -0.980936230066, -0.980936230066, -0.875452174688,  -0.875452174688,  -0.358229282237, -0.358229282237,
    0.327474439138,  0.327474439138,  0.859161814856,   0.859161814856,   0.986771964275,  0.986771964275,
    0.650287840157,  0.650287840157,  0.00796318378594, 0.00796318378594, -0.638106682348, -0.638106682348,
    0.650287840157,  0.650287840157,  0.00796318378594, 0.00796318378594, -0.638106682348, -0.638106682348,
    -0.984065005082, -0.984065005082, -0.867202179486,  -0.867202179486,  -0.34248061847,  -0.34248061847,
    0.34331492882,   0.34331492882,   0.867644100642,   0.867644100642,   0.983906694619,  0.983906694619};
const double n2_gx = 0.665516099049729;
// interpolate n3: x [1, 2, 5, 7], mode nearest, size (2, 3), scale None, align_corners None; y shape [1, 2, 2, 3]
const std::vector<double> n3_y = {0.295520206661,  0.991664810452,   0.0415806624333, -0.625070648893,
                                  -0.875452174688, 0.327474439138,   -0.326635126105, 0.875881079811,
                                  0.624377135416,  -0.0424680347169, -0.991778853443, -0.2946716015};
const double n3_gx = -0.602695219288449;
// interpolate b1: x [1, 2, 3, 4], mode bilinear, size (5, 7), scale None, align_corners False; y shape [1, 2, 5, 7]
const std::vector<double> b1_y = {
    0.295520206661,  0.490502627428,   0.802474500655,   0.91656789763,   0.969078979745,   0.788392334087,
    0.675463180551,  0.19394438897,    0.217585476662,   0.255411216969,  0.232063136857,   0.193123211122,
    0.106214186458,  0.0518960460426,  0.0415806624333,  -0.191790249487, -0.565183708559,  -0.794694004304,
    -0.970810441812, -0.917053034986,  -0.88345465572,   -0.207693733925, -0.154166806905,  -0.068523723673,
    0.030715793521,  0.127891579624,   0.197024814124,   0.240233085686,  -0.37387666483,   -0.12908451185,
    0.262582932917,  0.580988992071,   0.860359593914,   0.939743380197,  0.989358246623,   0.662969230082,
    0.435042871286,  0.0703606972126,  -0.30014761172,   -0.650489618977, -0.853841379647,  -0.980936230066,
    0.0476006681739, -0.0152661624677, -0.115853091494,  -0.186239535652, -0.244112927853,  -0.244595441234,
    -0.244897012097, -0.875452174688,  -0.690729713099,  -0.395173774555, -0.0153774215496, 0.365452108832,
    0.669273466385,  0.859161814856,   0.241882308689,   0.243667552443,  0.246523942449,   0.191324338563,
    0.123270045256,  0.0232889198884,  -0.0391992834662, 0.986771964275,  0.866599062804,   0.674322420451,
    0.329125511972,  -0.0381846637951, -0.407367444443,  -0.638106682348};
const double b1_gx = 0.296352114431629;
// interpolate b2: x [1, 2, 3, 4], mode bilinear, size (5, 7), scale None, align_corners True; y shape [1, 2, 5, 7]
const std::vector<double> b2_y = {
    0.295520206661,   0.568495595735,   0.841470984808,    0.91656789763,   0.991664810452,   0.833563995502,
    0.675463180551,   0.168550434547,   0.14167849074,     0.114806546933,  0.0609369466631,  0.00706734639369,
    -0.0484641955954, -0.103995737585,  0.0415806624333,   -0.285138614255, -0.611857890943,  -0.794694004304,
    -0.977530117665,  -0.930492386693,  -0.88345465572,    -0.166148001198, -0.158153132457,  -0.150158263715,
    -0.106852506116,  -0.0635467485183, -0.00529747653333, 0.0529517954516, -0.37387666483,   -0.0311676506584,
    0.311541363513,   0.580988992071,   0.850436620629,    0.919897433626,  0.989358246623,   0.662969230082,
    0.343872327768,   0.0247754254534,  -0.30014761172,    -0.625070648893, -0.80300343948,   -0.980936230066,
    -0.106241472303,  -0.136484200347,  -0.166726928392,   -0.157762516635, -0.148798104878,  -0.104842656241,
    -0.060887207605,  -0.875452174688,  -0.616840728463,   -0.358229282237, -0.0153774215496, 0.327474439138,
    0.593318126997,   0.859161814856,   0.0556598947931,   0.100844586877,  0.14602927896,    0.156874045211,
    0.167718811462,   0.139123188858,   0.110527566254,    0.986771964275,  0.818529902216,   0.650287840157,
    0.329125511972,   0.00796318378594, -0.315071749281,   -0.638106682348};
const double b2_gx = 0.27144682146564;
// interpolate b3: x [1, 2, 3, 4], mode bilinear, size None, scale (1.7, 1.7), align_corners False; y shape [1, 2, 5, 6]
const std::vector<double> b3_y = {
    0.295520206661,  0.504266092423,     0.82541360898,   0.92540282855,    0.945164570761,   0.759163611996,
    0.198425675045,  0.231828310783,     0.28321698115,   0.259494283554,   0.215306311887,   0.121582207689,
    0.0490494725576, -0.187306737894,    -0.550931677051, -0.764980401057,  -0.907552547918,  -0.859312260474,
    -0.190586667508, -0.154360253068,    -0.098627307776, -0.0177051906128, 0.0615007880902,  0.131581113749,
    -0.37387666483,  -0.111805065758,    0.291382009739,  0.612688713078,   0.87086627151,    0.952584875037,
    0.662969230082,  0.418953951842,     0.0435458314719, -0.338373851387,  -0.677403822595,  -0.886736517403,
    0.0747492811993, -0.000351272294944, -0.115890585363, -0.199452814411,  -0.263289747242,  -0.272999804687,
    -0.830204486313, -0.645436232505,    -0.361177380494, 0.0142718578589,  0.373808830223,   0.671210522568,
    0.165202491203,  0.180554468167,     0.204172894267,  0.173819524604,   0.130325343064,   0.0559305883797,
    0.986771964275,  0.858116269759,     0.660184432043,  0.291341708656,   -0.0870470906455, -0.467088188371};
const double b3_gx = 1.03074682611415;
// interpolate b4: x [1, 2, 5, 7], mode bilinear, size (2, 3), scale None, align_corners False; y shape [1, 2, 2, 3]
const std::vector<double> b4_y = {-0.242930148322, 0.806693260609,  0.154241313109,  0.402841676089,
                                  -0.740261581134, -0.321456420267, -0.639732828592, 0.526216009673,
                                  0.581880002434,  0.72594624378,   -0.370258826125, -0.685239539485};
const double b4_gx = 1.65181573501063;
// interpolate b5: x [1, 2, 5, 7], mode bilinear, size (1, 3), scale None, align_corners True; y shape [1, 2, 1, 3]
const std::vector<double> b5_y = {0.295520206661,  0.675463180551, -0.977530117665,
                                  -0.326635126105, 0.980763247745, -0.663633884213};
const double b5_gx = 2.71416639591223;

std::vector<double> as_double(const Tensor& t) { return to_vector<double>(t.to(DType::Float64)); }

struct AdaptiveGolden {
  const std::vector<double>*avg, *max, *idx;
  double avg_gx, max_gx;
};

void check_adaptive(const Shape& xs, std::array<int64_t, 2> out, const AdaptiveGolden& g) {
  Variable x(seq(xs, 0.7, 0.3), true);
  Variable y = adaptive_avg_pool2d(x, out);
  require_close(y.data(), *g.avg);
  y.backward(seq(y.shape(), 0.9, 0.1));
  CHECK(checksum(x.grad()) == Approx(g.avg_gx).epsilon(1e-10));
  x.zero_grad();
  auto [m, idx] = adaptive_max_pool2d_with_indices(x, out);
  require_close(m.data(), *g.max);
  REQUIRE(as_double(idx) == *g.idx);
  m.backward(seq(m.shape(), 0.9, 0.1));
  CHECK(checksum(x.grad()) == Approx(g.max_gx).epsilon(1e-10));
}

void check_interpolate(const Shape& xs, const InterpolateOptions& o, const Shape& y_shape,
                       const std::vector<double>& y_expect, double gx_expect) {
  Variable x(seq(xs, 0.7, 0.3), true);
  Variable y = interpolate(x, o);
  REQUIRE(y.shape() == y_shape);
  require_close(y.data(), y_expect);
  y.backward(seq(y.shape(), 0.9, 0.1));
  CHECK(checksum(x.grad()) == Approx(gx_expect).epsilon(1e-10));
}

InterpolateOptions sized(std::array<int64_t, 2> size, InterpolateMode mode, bool align = false) {
  InterpolateOptions o;
  o.size = size, o.mode = mode, o.align_corners = align;
  return o;
}

InterpolateOptions scaled(std::array<double, 2> scale, InterpolateMode mode, bool align = false) {
  InterpolateOptions o;
  o.scale_factor = scale, o.mode = mode, o.align_corners = align;
  return o;
}

constexpr auto kNearest = InterpolateMode::Nearest;
constexpr auto kBilinear = InterpolateMode::Bilinear;

}  // namespace

TEST_CASE("adaptive pooling: golden values from PyTorch") {
  SECTION("7x5 -> 3x4 (overlapping windows)") {
    check_adaptive({2, 3, 7, 5}, {3, 4}, {&ad1_avg, &ad1_max, &ad1_idx, ad1_avg_gx, ad1_max_gx});
  }
  SECTION("3x4 -> 5x7 (output larger than input)") {
    check_adaptive({1, 2, 3, 4}, {5, 7}, {&ad2_avg, &ad2_max, &ad2_idx, ad2_avg_gx, ad2_max_gx});
  }
}

TEST_CASE("interpolate: golden values from PyTorch") {
  SECTION("nearest to a size") { check_interpolate({1, 2, 3, 4}, sized({5, 7}, kNearest), {1, 2, 5, 7}, n1_y, n1_gx); }
  SECTION("nearest by a scale (uses 1/scale, not in/out)") {
    check_interpolate({1, 2, 5, 3}, scaled({1.5, 2.0}, kNearest), {1, 2, 7, 6}, n2_y, n2_gx);
  }
  SECTION("nearest shrinking") { check_interpolate({1, 2, 5, 7}, sized({2, 3}, kNearest), {1, 2, 2, 3}, n3_y, n3_gx); }
  SECTION("bilinear") { check_interpolate({1, 2, 3, 4}, sized({5, 7}, kBilinear), {1, 2, 5, 7}, b1_y, b1_gx); }
  SECTION("bilinear, align_corners") {
    check_interpolate({1, 2, 3, 4}, sized({5, 7}, kBilinear, true), {1, 2, 5, 7}, b2_y, b2_gx);
  }
  SECTION("bilinear by a scale") {
    check_interpolate({1, 2, 3, 4}, scaled({1.7, 1.7}, kBilinear), {1, 2, 5, 6}, b3_y, b3_gx);
  }
  SECTION("bilinear shrinking") {
    check_interpolate({1, 2, 5, 7}, sized({2, 3}, kBilinear), {1, 2, 2, 3}, b4_y, b4_gx);
  }
  SECTION("bilinear, align_corners, one output row") {
    check_interpolate({1, 2, 5, 7}, sized({1, 3}, kBilinear, true), {1, 2, 1, 3}, b5_y, b5_gx);
  }
}

TEST_CASE("adaptive pooling and interpolate: gradient checks") {
  for (auto out : {std::array<int64_t, 2>{2, 3}, std::array<int64_t, 2>{5, 4}, std::array<int64_t, 2>{1, 1}}) {
    INFO("output " << out[0] << "x" << out[1]);
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return adaptive_avg_pool2d(v[0], out); },
                      {test::random_double({2, 2, 5, 3}, 1)});
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return adaptive_max_pool2d(v[0], out); },
                      {test::random_double({2, 2, 5, 3}, 2)});
  }
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        return adaptive_avg_pool2d(v[0], {2, 2});
      },
      {test::random_double({3, 5, 4}, 3)});  // unbatched [C, H, W]
  const std::vector<InterpolateOptions> opts = {
      sized({5, 7}, kNearest),        scaled({1.5, 0.7}, kNearest),  sized({5, 7}, kBilinear),
      sized({5, 7}, kBilinear, true), scaled({2.5, 1.3}, kBilinear), sized({2, 2}, kBilinear),
      sized({1, 1}, kBilinear, true),
  };
  for (size_t i = 0; i < opts.size(); ++i) {
    INFO("interpolate case " << i);
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return interpolate(v[0], opts[i]); },
                      {test::random_double({2, 2, 3, 4}, 10 + i)});
  }
}

TEST_CASE("adaptive pooling: cross-checks") {
  const Tensor x = test::random_double({2, 3, 8, 6}, 21);
  Pool2dParams p;
  p.kernel = {4, 3}, p.stride = {4, 3};
  // Dividing sizes: the windows are exactly avg_pool2d's and max_pool2d's.
  REQUIRE(allclose(adaptive_avg_pool2d(x, {2, 2}), avg_pool2d(x, p), 1e-14, 1e-14));
  REQUIRE(allclose(adaptive_max_pool2d(x, {2, 2}).first, max_pool2d(x, p), 0, 0));
  REQUIRE(allclose(adaptive_max_pool2d(x, {2, 2}).second, max_pool2d_with_indices(x, p).second, 0, 0));
  // Same size: identity.
  REQUIRE(allclose(adaptive_avg_pool2d(x, {8, 6}), x, 0, 0));
  // The module's fast paths (mean, avg_pool2d) and its general path agree with the kernel.
  for (nn::Size2 out : {nn::Size2(1), nn::Size2(2, 3), nn::Size2(3, 5)}) {
    nn::AdaptiveAvgPool2d pool(out);
    REQUIRE(allclose(pool(Variable(x)).data(), adaptive_avg_pool2d(x, out), 1e-14, 1e-14));
  }
  nn::AdaptiveMaxPool2d mpool({3, 5});
  REQUIRE(allclose(mpool(Variable(x)).data(), adaptive_max_pool2d(x, {3, 5}).first, 0, 0));
  REQUIRE(mpool.extra_repr() == "output_size=(3, 5)");
  REQUIRE(nn::AdaptiveAvgPool2d(7).extra_repr() == "output_size=7");
}

TEST_CASE("adaptive pooling and interpolate: results do not depend on the thread count") {
  // Enough planes (640, about 260 per task) that the kernels split them over threads.
  const Tensor x = test::random_double({4, 160, 9, 7}, 51);
  const Tensor gy = test::random_double({4, 160, 5, 11}, 52);
  const Upsample2dParams up{{5, 11}, {0, 0}, kBilinear, false};
  const int threads = get_num_threads();
  std::vector<std::vector<double>> runs;
  for (int t : {1, 2}) {
    set_num_threads(t);
    std::vector<double> all;
    for (const Tensor& r :
         {adaptive_avg_pool2d(x, {5, 11}), adaptive_avg_pool2d_backward(gy, x.shape()),
          adaptive_max_pool2d(x, {5, 11}).first, upsample2d(x, up), upsample2d_backward(gy, x.shape(), up)}) {
      const auto v = to_vector<double>(r);
      all.insert(all.end(), v.begin(), v.end());
    }
    runs.push_back(all);
  }
  set_num_threads(threads);
  REQUIRE(runs[0] == runs[1]);
}

TEST_CASE("MaxPool2d and AvgPool2d modules: rectangular options") {
  const Tensor x = test::random_double({2, 3, 7, 8}, 41);
  nn::MaxPool2d mp({3, 2}, {2, 1}, {1, 0}, {1, 2}, /*ceil_mode=*/true);
  Pool2dParams p;
  p.kernel = {3, 2}, p.stride = {2, 1}, p.padding = {1, 0}, p.dilation = {1, 2}, p.ceil_mode = true;
  REQUIRE(allclose(mp(Variable(x)).data(), max_pool2d(x, p), 0, 0));
  REQUIRE(mp.extra_repr() == "kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), ceil_mode=True");
  // A stride of 0 in a dim means the kernel size there.
  nn::AvgPool2d ap({3, 2}, {0, 1}, 1, /*ceil_mode=*/false, /*count_include_pad=*/false);
  Pool2dParams q;
  q.kernel = {3, 2}, q.stride = {3, 1}, q.padding = {1, 1}, q.count_include_pad = false;
  REQUIRE(allclose(ap(Variable(x)).data(), avg_pool2d(x, q), 0, 0));
  REQUIRE(ap.extra_repr() == "kernel_size=(3, 2), stride=(3, 1), padding=1");
  REQUIRE(nn::MaxPool2d(2).extra_repr() == "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False");
}

TEST_CASE("interpolate: closed-form cases and the Upsample module") {
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  // Nearest x2 repeats each pixel in a 2x2 block.
  REQUIRE(to_vector<float>(nn::Upsample::by_scale(2.0)(Variable(x)).data()) ==
          std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // Bilinear with align_corners keeps the corners and interpolates linearly between them.
  const Variable y = nn::Upsample::to_size({3, 3}, kBilinear, true)(Variable(x));
  REQUIRE(to_vector<float>(y.data()) == std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
  REQUIRE(nn::Upsample::to_size({3, 3}, kBilinear, true).extra_repr() ==
          "size=(3, 3), mode=bilinear, align_corners=True");
  // Resizing to the same size is the identity in both modes.
  const Tensor r = test::random_double({2, 3, 4, 5}, 31);
  REQUIRE(allclose(interpolate(Variable(r), sized({4, 5}, kBilinear)).data(), r, 0, 0));
  REQUIRE(allclose(interpolate(Variable(r), sized({4, 5}, kNearest)).data(), r, 0, 0));
  // Float32 agrees with float64.
  REQUIRE(allclose(interpolate(Variable(r.to(DType::Float32)), scaled({1.7, 2.2}, kBilinear)).data().to(DType::Float64),
                   interpolate(Variable(r), scaled({1.7, 2.2}, kBilinear)).data(), 1e-6, 1e-6));
}

TEST_CASE("adaptive pooling and interpolate: errors") {
  const Tensor x = zeros({1, 2, 4, 4});
  REQUIRE_THROWS_WITH(adaptive_avg_pool2d(x, {-1, 2}),
                      Catch::Contains("adaptive_avg_pool2d: output_size must be non-negative"));
  REQUIRE_THROWS_WITH(adaptive_max_pool2d(zeros({4, 4}), {2, 2}), Catch::Contains("must be 4-D"));
  REQUIRE_THROWS_WITH(adaptive_avg_pool2d(zeros({1, 2, 0, 4}), {2, 2}), Catch::Contains("empty spatial dim"));
  InterpolateOptions both = sized({2, 2}, kNearest);
  both.scale_factor = std::array<double, 2>{2.0, 2.0};
  REQUIRE_THROWS_WITH(interpolate(Variable(x), both), Catch::Contains("exactly one of size and scale_factor"));
  REQUIRE_THROWS_WITH(interpolate(Variable(x), sized({2, 2}, kNearest, true)), Catch::Contains("align_corners"));
  REQUIRE_THROWS_WITH(interpolate(Variable(zeros({2, 4, 4})), sized({2, 2}, kNearest)), Catch::Contains("4-D"));
  REQUIRE_THROWS_WITH(interpolate(Variable(x), scaled({0.1, 1.0}, kNearest)),
                      Catch::Contains("output size must be positive"));
  REQUIRE_THROWS_WITH(interpolate(Variable(x), scaled({-1.0, 1.0}, kNearest)),
                      Catch::Contains("scale_factor must be positive"));
  REQUIRE_THROWS_WITH(upsample2d(zeros({1, 2, 4, 4}, DType::Int64), {}), Catch::Contains("float32 or float64"));
  // A scale that does not give the output size would read (and the backward write) past the input.
  Upsample2dParams p;
  p.output_size = {8, 8}, p.scales = {0.25, 2.0}, p.mode = InterpolateMode::Bilinear;
  REQUIRE_THROWS_WITH(upsample2d(x, p),
                      Catch::Contains("scale factor 0.25") && Catch::Contains("not the output size 8"));
  REQUIRE_THROWS_WITH(upsample2d_backward(zeros({1, 2, 8, 8}), x.shape(), p), Catch::Contains("scale factor 0.25"));
}
