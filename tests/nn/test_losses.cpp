// Losses (functional and modules): BCE, BCE with logits (pos_weight, weight),
// L1, smooth L1, Huber, KL divergence (log_target, batchmean) and
// cross_entropy with class weights, ignore_index, label smoothing and
// probability targets. PyTorch golden values (tests/golden/conv_losses.py) for
// every reduction and for the gradients of input and target, finite-difference
// gradient checks, a cross-check of the weighted path against the fused kernel,
// the modules and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tests/common/golden_seq.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/losses.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::require_close;
using test::seq;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Golden values, pasted from tests/golden/conv_losses.py.
const std::vector<double> bce_none = {46.0367746202,  0.120271786699, 0.187997545783, 1.08005433596,
                                      0.596538775288, 42.943999597,   1.08489483798,  1.66444882692,
                                      1.10173633553,  2.35707285723,  1.36303359863,  0.782944052184};
const std::vector<double> bce_mean = {8.27664726412};
const std::vector<double> bce_sum = {99.3197671694};
const std::vector<double> bce_mean_gx = {-0.0570461651239, -0.085686005278, -0.117690001115, -0.207337103472,
                                         -0.127515585492,  -0.912605456394, -0.115398345721, 0.278944601095,
                                         0.404978635601,   0.883225002906,  0.302035425398,  0.102508691628};
const std::vector<double> bce_mean_gt = {-0.0150621049801, -0.184072589028, -0.287963762463,  -0.0729159873805,
                                         0.0516121176415,  0.245309348609,  0.161192993057,   -0.0653609888217,
                                         -0.0936381068588, -0.188789858649, -0.0508396484117, 0.212191952362};
const std::vector<double> bcel_none = {2.37793522788,  0.0669916924291, 0.11332041807,   10.486980045,
                                       1.52446279354,  2.34823686132,   2.29388816995,   6.43137956197,
                                       0.720272391896, 0.0769099038487, 0.0911079118682, 40.9023922399};
const std::vector<double> bcel_mean = {5.61948976814};
const std::vector<double> bcel_sum = {67.4338772177};
const std::vector<double> bcel_plain_mean = {2.00960437106};
const std::vector<double> bcel_sum_gz = {0.039632253798,  -0.0306734460441, -0.0439359252221, -4.6080361158,
                                         -0.369879526615, -0.929269310258,  0.83179372477,    1.55979231792,
                                         0.35881156129,   0.0512231866004,  0.0165745396008,  -0.681706537332};
const std::vector<double> bcel_sum_gt = {-30,
                                         -3.92257169306,
                                         -3.65634227627,
                                         11.2495962915,
                                         1.99984651513,
                                         3.86171447195,
                                         -3.54136321774,
                                         -7.8391388922,
                                         -0.638196724699,
                                         5.65805906755,
                                         2.84572636238,
                                         360};
const std::vector<double> l1_none = {0.766659697563, 0.304447342043, 0.537992342779, 0.302416116354, 1.73494151982,
                                     2.84929882786,  2.8626134414,   1.60385331043,  0.367868982526, 2.0841848943};
const std::vector<double> l1_mean = {1.34142764751};
const std::vector<double> l1_sum = {13.4142764751};
const std::vector<double> l1_mean_ga = {-0.1, 0.1, 0.1, -0.1, -0.1, -0.1, -0.1, -0.1, 0.1, 0.1};
const std::vector<double> l1_mean_gb = {0.1, -0.1, -0.1, 0.1, 0.1, 0.1, 0.1, 0.1, -0.1, -0.1};
const std::vector<double> sl1_none = {0.516659697563, 0.0926881840771, 0.287992342779, 0.0914555074308, 1.48494151982,
                                      2.59929882786,  2.6126134414,    1.35385331043,  0.135327588304,  1.8341848943};
const std::vector<double> sl1_mean = {1.1009015314};
const std::vector<double> sl1_sum = {11.009015314};
const std::vector<double> sl1_mean_ga = {-0.1, 0.0608894684086, 0.1, -0.0604832232709, -0.1, -0.1, -0.1,
                                         -0.1, 0.0735737965051, 0.1};
const std::vector<double> sl1_mean_gb = {0.1, -0.0608894684086, -0.1, 0.0604832232709, 0.1, 0.1, 0.1,
                                         0.1, -0.0735737965051, -0.1};
const std::vector<double> huber_none = {0.291661788294,  0.0463440920386, 0.144717880444, 0.0457277537154,
                                        0.969459063872,  1.7495091795,    1.75882940898,  0.8776973173,
                                        0.0676637941522, 1.21392942601};
const std::vector<double> huber_mean = {0.716553970431};
const std::vector<double> huber_sum = {7.16553970431};
const std::vector<double> huber_mean_ga = {-0.07, 0.0304447342043, 0.0537992342779, -0.0302416116354, -0.07,
                                           -0.07, -0.07,           -0.07,           0.0367868982526,  0.07};
const std::vector<double> huber_mean_gb = {
    0.07, -0.0304447342043, -0.0537992342779, 0.0302416116354, 0.07, 0.07, 0.07, 0.07, -0.0367868982526, -0.07};
const std::vector<double> kl_none = {
    0.12112347164,     0.0535898275766, -0.05809812406, -0.0621027397094, -0.0711395486072, 0.0552768827185, 0,
    -0.00144263482115, 1.31275513625,   0.272606056706, -0.0580301261377, -0.209983065141};
const std::vector<double> kl_mean = {0.112879594701};
const std::vector<double> kl_sum = {1.35455513641};
const std::vector<double> kl_batchmean = {0.451518378804};
const std::vector<double> kl_batchmean_gx = {
    -0.0546021465818, -0.0897516423035, -0.104460945774, -0.0845185986737, -0.200753000529, -0.0883274813847, -0,
    -0.0115219481102, -0.167764758441,  -0.077207407941, -0.0473357087164, -0.0410254582349};
const std::vector<double> kl_batchmean_gt = {0.57981015445, 0.399676690775, 0.271536581735, 0.251690895806,
                                             0.29395960408, 0.402868610025, kNaN,           0.319421384037,
                                             1.20277506329, 0.725647525248, 0.197119215748, -0.235373335309};
const std::vector<double> kl_log_sum = {38.0440012487};
const std::vector<double> kl_log_sum_gx = {-2.1887419126,   -2.58308551226,  -2.71712300843,  -2.53187393669,
                                           -2.10792744705,  -1.60324634819,  -1.15156283651,  -0.81309935285,
                                           -0.588701425856, -0.454514594656, -0.386121931807, -0.368139701587};
const std::vector<double> kl_log_sum_gt = {9.48125167776, 8.93776351485, 8.0821178787,   7.73792269564,
                                           4.49969094082, 4.82373229899, 4.35841779261,  3.3469213682,
                                           2.2165016586,  1.29585060801, 0.614564644934, 0.143404178087};
const std::vector<double> cew_none = {1.48794287538, 0, 0.287414230453, 0.104213179762, 4.83081071872};
const std::vector<double> cews_none = {1.4978450451, 0, 0.496918376535, 0.452654262033, 4.63913073847};
const std::vector<double> cew_mean = {1.49119577874};
const std::vector<double> cews_mean = {1.57478853825};
const std::vector<double> cew_sum = {6.71038100431};
const std::vector<double> cews_sum = {7.08654842214};
const std::vector<double> cews_mean_grad = {0.00772635251748,
                                            0.0658938990987,
                                            -0.209141402005,
                                            0.135521150389,
                                            0,
                                            0,
                                            0,
                                            0,
                                            -0.0017749904787,
                                            0.000341141899814,
                                            0.0367136314099,
                                            -0.035279782831,
                                            -0.00129517548797,
                                            0.0136895375424,
                                            -0.00850814068169,
                                            -0.00388622137274,
                                            -0.0011762910922,
                                            -0.241936056341,
                                            0.0223149111227,
                                            0.220797436311};
const std::vector<double> cew3_mean = {1.08964884447};
const std::vector<double> cep_none = {1.45559457686, 2.22658761037, 2.34204378832, 4.56121674009, 3.27948506803};
const std::vector<double> cep_mean = {2.77298555673};
const std::vector<double> cep_sum = {13.8649277837};
const std::vector<double> cep_mean_grad = {-0.00635380733621, -0.0086675318281, -0.00943941742839, 0.0244607565927,
                                           0.114285428773,    -0.0468656652371, -0.0559141194755,  -0.0115056440603,
                                           -0.0318586901087,  -0.0451383179065, -0.0271122132715,  0.104109221287,
                                           0.177198850323,    0.00418896731112, -0.100844712374,   -0.0805431052603,
                                           -0.0270007179205,  -0.07086421713,   -0.0704486317875,  0.168313566838};

// t with the flat elements `at` replaced by `v`.
Tensor with(const Tensor& t, std::vector<std::pair<size_t, double>> at) {
  std::vector<double> v = to_vector<double>(t);
  for (auto [i, x] : at) v[i] = x;
  return from_vector(v, t.shape());
}

Tensor vec(std::vector<double> v) { return from_vector(v, {static_cast<int64_t>(v.size())}); }

const Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

// The golden script's inputs.
Tensor bce_target() { return add(mul(seq({3, 4}, 0.4, 1.0), 0.5), 0.5); }
Tensor bce_interior() { return add(mul(seq({3, 4}, 0.9, 0.2), 0.45), 0.5); }
Tensor class_weights() { return vec({0.5, 1.2, 2.0, 0.8}); }
Tensor ce_logits() { return seq({5, 4}, 0.7, 0.0, 3.0); }
Tensor ce_target() { return from_vector<int64_t>({2, -1, 3, 0, 1}, {5}); }

}  // namespace

TEST_CASE("binary_cross_entropy: golden values, clamped logs at 0 and 1", "[loss]") {
  const Tensor p = with(bce_interior(), {{0, 0.0}, {5, 1.0}});
  const Tensor bw = vec({0.5, 1.0, 1.5, 2.0});
  const std::vector<double>* expect[] = {&bce_none, &bce_mean, &bce_sum};
  for (int r = 0; r < 3; ++r)
    require_close(binary_cross_entropy(Variable(p), Variable(bce_target()), bw, kReductions[r]).data(), *expect[r]);
  Variable x(bce_interior(), true), t(bce_target(), true);
  binary_cross_entropy(x, t, bw).backward();
  require_close(x.grad(), bce_mean_gx);
  require_close(t.grad(), bce_mean_gt);
}

TEST_CASE("binary_cross_entropy_with_logits: golden values, stable at |z| = 60", "[loss]") {
  const Tensor z0 = with(mul(seq({3, 4}, 1.1, 0.3), 4.0), {{0, 60.0}, {11, -60.0}});
  const Tensor bw = vec({0.5, 1.0, 1.5, 2.0}), pw = vec({1.0, 2.0, 0.5, 3.0});
  const std::vector<double>* expect[] = {&bcel_none, &bcel_mean, &bcel_sum};
  for (int r = 0; r < 3; ++r)
    require_close(binary_cross_entropy_with_logits(Variable(z0), Variable(bce_target()), bw, pw, kReductions[r]).data(),
                  *expect[r]);
  require_close(binary_cross_entropy_with_logits(Variable(z0), Variable(bce_target())).data(), bcel_plain_mean);
  Variable z(z0, true), t(bce_target(), true);
  binary_cross_entropy_with_logits(z, t, bw, pw, Reduction::Sum).backward();
  require_close(z.grad(), bcel_sum_gz);
  require_close(t.grad(), bcel_sum_gt);
}

TEST_CASE("l1, smooth_l1 and huber losses: golden values", "[loss]") {
  using Fn = Variable (*)(const Variable&, const Variable&, Reduction);
  struct Case {
    const char* name;
    Fn fn;
    const std::vector<double>*none, *mean, *sum, *ga, *gb;
  };
  const Case cases[] = {
      {"l1", [](const Variable& a, const Variable& b, Reduction r) { return l1_loss(a, b, r); }, &l1_none, &l1_mean,
       &l1_sum, &l1_mean_ga, &l1_mean_gb},
      {"smooth_l1 beta 0.5",
       [](const Variable& a, const Variable& b, Reduction r) { return smooth_l1_loss(a, b, r, 0.5); }, &sl1_none,
       &sl1_mean, &sl1_sum, &sl1_mean_ga, &sl1_mean_gb},
      {"huber delta 0.7", [](const Variable& a, const Variable& b, Reduction r) { return huber_loss(a, b, r, 0.7); },
       &huber_none, &huber_mean, &huber_sum, &huber_mean_ga, &huber_mean_gb},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Variable a(seq({2, 5}, 0.8, 0.1, 2.0), true), b(seq({2, 5}, 0.3, 0.7, 1.5), true);
    require_close(c.fn(a, b, Reduction::None).data(), *c.none);
    require_close(c.fn(a, b, Reduction::Sum).data(), *c.sum);
    Variable loss = c.fn(a, b, Reduction::Mean);
    require_close(loss.data(), *c.mean);
    loss.backward();
    require_close(a.grad(), *c.ga);
    require_close(b.grad(), *c.gb);
  }
}

TEST_CASE("kl_div: golden values with a zero target, batchmean and log_target", "[loss]") {
  const Tensor lp0 = log_softmax(seq({3, 4}, 0.6, 0.2, 2.0), 1);
  const Tensor q0 = with(softmax(seq({3, 4}, 0.35, 0.9, 3.0), 1), {{6, 0.0}});
  const KLDivReduction reds[] = {KLDivReduction::None, KLDivReduction::Mean, KLDivReduction::Sum,
                                 KLDivReduction::BatchMean};
  const std::vector<double>* expect[] = {&kl_none, &kl_mean, &kl_sum, &kl_batchmean};
  for (int r = 0; r < 4; ++r) require_close(kl_div(Variable(lp0), Variable(q0), reds[r]).data(), *expect[r]);
  Variable lp(lp0, true), q(q0, true);
  kl_div(lp, q, KLDivReduction::BatchMean).backward();
  require_close(lp.grad(), kl_batchmean_gx);
  require_close(q.grad(), kl_batchmean_gt);
  Variable lp2(lp0, true), lq(seq({3, 4}, 0.35, 0.9), true);
  Variable loss = kl_div(lp2, lq, KLDivReduction::Sum, /*log_target=*/true);
  require_close(loss.data(), kl_log_sum);
  loss.backward();
  require_close(lp2.grad(), kl_log_sum_gx);
  require_close(lq.grad(), kl_log_sum_gt);
}

TEST_CASE("cross_entropy with class weights: golden values", "[loss]") {
  CrossEntropyOptions opts;
  opts.ignore_index = -1;
  const std::vector<double>*plain[] = {&cew_none, &cew_mean, &cew_sum}, *smooth[] = {&cews_none, &cews_mean, &cews_sum};
  for (int r = 0; r < 3; ++r) {
    opts.reduction = kReductions[r];
    opts.label_smoothing = 0.0;
    require_close(cross_entropy(Variable(ce_logits()), ce_target(), class_weights(), opts).data(), *plain[r]);
    opts.label_smoothing = 0.1;
    require_close(cross_entropy(Variable(ce_logits()), ce_target(), class_weights(), opts).data(), *smooth[r]);
  }
  opts.reduction = Reduction::Mean;
  Variable z(ce_logits(), true);
  cross_entropy(z, ce_target(), class_weights(), opts).backward();
  require_close(z.grad(), cews_mean_grad);
  // [N, C, d] logits with [N, d] targets.
  const Tensor t3 = from_vector<int64_t>({0, 2, 1, 1, 2, 2, 0, 1}, {2, 4});
  require_close(cross_entropy(Variable(seq({2, 3, 4}, 1.3, 0.2, 2.0)), t3, vec({1.5, 0.5, 1.0})).data(), cew3_mean);
}

TEST_CASE("weighted nll_loss and cross_entropy: a masked class (-inf) or an ignored NaN row stays finite", "[loss]") {
  // As PyTorch, the loss reads only the weighted entries: 0 * -inf must not make it NaN.
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const Tensor w = vec({1.0, 2.0, 3.0});
  const Tensor lp = from_vector<double>({-inf, -0.5, -1.0, -0.2, -inf, -2.0, nan, nan, nan}, {3, 3});
  const Tensor t = from_vector<int64_t>({1, 0, -1}, {3});
  Variable x(lp, true);
  const Variable loss = nll_loss(x, t, w, Reduction::Mean, -1);
  // (2 * 0.5 + 1 * 0.2) / (2 + 1); the ignored row weighs nothing.
  require_close(loss.data(), {0.4});
  loss.backward();
  require_close(x.grad(), {0, -2.0 / 3, 0, -1.0 / 3, 0, 0, 0, 0, 0});
  // Logits with a masked class: the weighted path equals the fused unweighted one at unit weights.
  const Tensor z = from_vector<double>({-inf, 1.0, 2.0, 0.5, -inf, -1.0}, {2, 3});
  const Tensor t2 = from_vector<int64_t>({1, 0}, {2});
  CrossEntropyOptions opts;
  const double weighted = cross_entropy(Variable(z), t2, vec({1.0, 1.0, 1.0}), opts).data().item();
  REQUIRE(std::isfinite(weighted));
  REQUIRE(weighted == Approx(cross_entropy(Variable(z), t2, opts).data().item()).epsilon(1e-12));
}

TEST_CASE("cross_entropy with probability targets: golden values", "[loss]") {
  const Tensor probs = softmax(seq({5, 4}, 0.45, 0.3, 2.0), 1);
  CrossEntropyOptions opts;
  opts.label_smoothing = 0.2;
  const std::vector<double>* expect[] = {&cep_none, &cep_mean, &cep_sum};
  for (int r = 0; r < 3; ++r) {
    opts.reduction = kReductions[r];
    require_close(cross_entropy(Variable(ce_logits()), probs, class_weights(), opts).data(), *expect[r]);
  }
  opts.reduction = Reduction::Mean;
  Variable z(ce_logits(), true);
  cross_entropy(z, probs, class_weights(), opts).backward();
  require_close(z.grad(), cep_mean_grad);
}

TEST_CASE("cross_entropy: unit weights agree with the fused kernel", "[loss]") {
  // The weighted path (tensor ops) and the fused nll kernel are separate code.
  const Tensor logits = test::random_double({6, 5, 3}, 1, -3, 3);
  const Tensor target = from_vector<int64_t>({0, 4, -1, 2, 1, 3, 3, 0, -1, 1, 2, 4, 0, 0, 1, 2, 3, 4}, {6, 3});
  for (Reduction r : kReductions) {
    for (double eps : {0.0, 0.3}) {
      const CrossEntropyOptions opts{r, -1, eps};
      Variable a(logits, true), b(logits, true);
      Variable fused = cross_entropy(a, target, opts),
               weighted = cross_entropy(b, target, ones({5}, DType::Float64), opts);
      REQUIRE(allclose(fused.data(), weighted.data(), 1e-12, 1e-12));
      sum(fused).backward();
      sum(weighted).backward();
      REQUIRE(allclose(a.grad(), b.grad(), 1e-12, 1e-12));
    }
  }
}

TEST_CASE("losses: gradient checks of input and target", "[loss][grad]") {
  const Shape s{3, 4};
  for (Reduction r : kReductions) {
    INFO("reduction " << int(r));
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return l1_loss(v[0], v[1], r); },
                      {test::random_double(s, 1), test::random_double(s, 2)});
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return smooth_l1_loss(v[0], v[1], r, 0.6); },
                      {test::random_double(s, 3), test::random_double(s, 4)});
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return huber_loss(v[0], v[1], r, 0.4); },
                      {test::random_double(s, 5), test::random_double(s, 6)});
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& v) {
          return binary_cross_entropy(v[0], v[1], vec({1, 2, .5, 1}), r);
        },
        {test::random_double(s, 7, 0.05, 0.95), test::random_double(s, 8, 0, 1)});
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& v) {
          return binary_cross_entropy_with_logits(v[0], v[1], vec({1, 2, .5, 1}), vec({3, 1, .2, 2}), r);
        },
        {test::random_double(s, 9, -4, 4), test::random_double(s, 10, 0, 1)});
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& v) { return binary_cross_entropy_with_logits(v[0], v[1], {}, {}, r); },
        {test::random_double(s, 11, -4, 4), test::random_double(s, 12, 0, 1)});
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return kl_div(v[0], v[1], KLDivReduction::BatchMean); },
                      {test::random_double(s, 13, -3, 0), test::random_double(s, 14, 0.1, 1)});
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return kl_div(v[0], v[1], KLDivReduction::None, true); },
                      {test::random_double(s, 15, -3, 0), test::random_double(s, 16, -3, 0)});
    const CrossEntropyOptions opts{r, 1, 0.2};
    const Tensor target = from_vector<int64_t>({0, 3, 1, 2, 2}, {5});
    REQUIRE_GRADCHECK(
        [&](const std::vector<Variable>& v) {
          return cross_entropy(v[0], target, vec({.3, 1, 2, .7}), opts);
        },
        {test::random_double({5, 4}, 17, -2, 2)});
    const Tensor probs = softmax(test::random_double({5, 4}, 18), 1);
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return cross_entropy(v[0], probs, Tensor(), opts); },
                      {test::random_double({5, 4}, 19, -2, 2)});
  }
}

TEST_CASE("loss modules", "[loss][nn]") {
  const Tensor a = test::random_double({2, 3}, 1, 0.1, 0.9), b = test::random_double({2, 3}, 2, 0.1, 0.9);
  const Tensor w = vec({1, 2, 3}), pw = vec({2, 1, .5});
  REQUIRE(nn::L1Loss(Reduction::Sum)(Variable(a), Variable(b)).item() == l1_loss(a, b, Reduction::Sum).item());
  REQUIRE(nn::SmoothL1Loss(Reduction::Mean, 0.1)(Variable(a), Variable(b)).item() ==
          smooth_l1_loss(a, b, Reduction::Mean, 0.1).item());
  REQUIRE(nn::HuberLoss(Reduction::Mean, 0.1)(Variable(a), Variable(b)).item() ==
          huber_loss(a, b, Reduction::Mean, 0.1).item());
  REQUIRE(nn::KLDivLoss(KLDivReduction::BatchMean)(Variable(log(a)), Variable(b)).item() ==
          kl_div(log(a), b, KLDivReduction::BatchMean).item());
  nn::BCELoss bce(w);
  REQUIRE(bce(Variable(a), Variable(b)).item() == binary_cross_entropy(a, b, w).item());
  REQUIRE(bce.named_buffers().size() == 1);
  nn::BCEWithLogitsLoss bcel(w, Reduction::Sum, pw);
  REQUIRE(bcel(Variable(a), Variable(b)).item() ==
          binary_cross_entropy_with_logits(a, b, w, pw, Reduction::Sum).item());
  REQUIRE(bcel.named_buffers().size() == 2);
  REQUIRE(nn::BCEWithLogitsLoss().named_buffers().empty());
  nn::CrossEntropyLoss ce(class_weights(), {Reduction::Sum, -1, 0.0});
  REQUIRE(ce(Variable(ce_logits()), ce_target()).item() == Approx(cew_sum[0]).epsilon(1e-12));
  REQUIRE(ce.named_buffers().size() == 1);
}

TEST_CASE("losses: errors name the op and the shapes", "[loss][errors]") {
  const Variable a(zeros({2, 3})), b(zeros({3, 2}));
  REQUIRE_THROWS_WITH(l1_loss(a, b), Catch::Contains("l1_loss: input [2, 3] and target [3, 2]"));
  REQUIRE_THROWS_WITH(binary_cross_entropy(Variable(full({2}, 1.5)), Variable(zeros({2}))),
                      Catch::Contains("binary_cross_entropy: every input must lie in [0, 1]"));
  REQUIRE_THROWS_WITH(binary_cross_entropy(Variable(zeros({2, 3})), Variable(zeros({2, 3})), zeros({4})),
                      Catch::Contains("weight [4] must broadcast"));
  REQUIRE_THROWS_WITH(huber_loss(a, a, Reduction::Mean, 0.0), Catch::Contains("delta must be positive"));
  REQUIRE_THROWS_WITH(smooth_l1_loss(a, a, Reduction::Mean, -1.0), Catch::Contains("beta must be non-negative"));
  const Tensor logits = zeros({2, 3});
  REQUIRE_THROWS_WITH(cross_entropy(Variable(logits), from_vector<int64_t>({0, 1}, {2}), zeros({2})),
                      Catch::Contains("weight must be [3]"));
  REQUIRE_THROWS_WITH(cross_entropy(Variable(logits), from_vector<int64_t>({0, 3}, {2}), ones({3})),
                      Catch::Contains("target 3 of sample 1 is out of range for 3 classes"));
  REQUIRE_THROWS_WITH(cross_entropy(Variable(logits), zeros({2, 4})), Catch::Contains("probability targets [2, 4]"));
  REQUIRE_THROWS_WITH(kl_div(a, Variable(zeros({2, 3}, DType::Float64))), Catch::Contains("kl_div: input is"));
}
