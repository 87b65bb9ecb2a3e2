// Gradients at the edges, checked against PyTorch 1.13 (values from
// tests/golden/elementwise_parity.py, quoted next to each check): NaN through relu,
// maximum, clamp and leaky_relu; tiny divisors; silu near the float maximum;
// log_softmax and cross_entropy with huge logits; losses whose every target
// is ignored; double backward of nll_loss and of a 0-d softmax; pow's special
// exponents; bce at 0 and 1; bfloat16 and unbatched classification losses; var of
// a 0-d input with correction 1 and in float32 with a large mean; kl_div double
// backward at zero targets.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/values.h"
#include <ddl/autograd/functions.h>
#include <ddl/autograd/grad.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using ddl::test::v;

namespace {
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor d(std::vector<double> x, Shape s = {}) {
  return from_vector<double>(x, s.empty() ? Shape{static_cast<int64_t>(x.size())} : s);
}
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }
void require_same(const Tensor& t, const std::vector<double>& want) {
  const auto got = v(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(same(got[i], want[i]));
  }
}
void require_near(const Tensor& t, const std::vector<double>& want, double rel) {
  const auto got = v(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(got[i] == Approx(want[i]).epsilon(rel).margin(0));
  }
}

// The gradient of sum(f(x) * cot) w.r.t. x.
template <typename F>
Tensor grad_of(F f, const Tensor& x, const Tensor& cot = Tensor()) {
  Variable xv(x, true);
  const Variable y = f(xv);
  sum(mul(y, Variable(cot.defined() ? cot : ones_like(y.data())))).backward();
  return xv.grad();
}
}  // namespace

TEST_CASE("relu, maximum, minimum, clamp, leaky_relu, abs: gradients at NaN as PyTorch", "[grad][parity]") {
  for (DType t : {DType::Float64, DType::Float32}) {
    INFO(t);
    const Tensor x = d({kNan, -1, 0, 1}).to(t);
    // torch.relu: forward [nan, 0, 0, 1], gradient [1, 0, 0, 1] (threshold_backward passes NaN).
    require_same(relu(Variable(x)).data(), {kNan, 0, 0, 1});
    INFO("relu gradient");
    require_same(grad_of([](const Variable& a) { return relu(a); }, x), {1, 0, 0, 1});
    // Its double backward uses the same mask.
    Variable xv(x, true);
    INFO("relu double backward");
    const Variable g = autograd::grad({sum(relu(xv))}, {xv}, {}, std::nullopt, true)[0];
    require_same(g.data(), {1, 0, 0, 1});
    // ... as a select: an inf incoming gradient gives 0 where x <= 0, not 0·inf.
    const Variable gi =
        autograd::grad({relu(xv)}, {xv}, {Variable(d({kInf, kInf, kInf, kInf}).to(t))}, std::nullopt, true)[0];
    require_same(gi.data(), {kInf, 0, 0, kInf});
    // leaky_relu(0.1): gradient [0.1, 0.1, 0.1, 1] (x > 0 ? 1 : slope, NaN is not > 0).
    const double k = t == DType::Float32 ? double(0.1f) : 0.1;
    require_same(grad_of([](const Variable& a) { return leaky_relu(a, 0.1); }, x), {k, k, k, 1});
    // abs: sign(NaN) = 0.
    require_same(grad_of([](const Variable& a) { return abs(a); }, x), {0, -1, 0, 1});
    // clamp(-1, 1) at [nan, -2, -1, 0, 1, 2]: [0, 0, 1, 1, 1, 0]; lo > hi: all 0 (and no error).
    const Tensor c = d({kNan, -2, -1, 0, 1, 2}).to(t);
    require_same(grad_of([](const Variable& a) { return clamp(a, -1.0, 1.0); }, c), {0, 0, 1, 1, 1, 0});
    require_same(grad_of([](const Variable& a) { return clamp(a, 2.0, 1.0); }, c), {0, 0, 0, 0, 0, 0});
    require_same(clamp(Variable(c), 2.0, 1.0).data(), {kNan, 1, 1, 1, 1, 1});
    // A NaN bound passes no gradient; outside the bounds an inf cotangent gives 0, not 0·inf
    // (torch: clamp([-2, 0.5, 2], -1, 1) with cotangent inf: [0, inf, 0]; min=-1 only: [0, inf, inf]).
    require_same(grad_of([](const Variable& a) { return clamp(a, kNan, 1.0); }, c), {0, 0, 0, 0, 0, 0});
    const Tensor e = d({-2, 0.5, 2}).to(t), infs = d({kInf, kInf, kInf}).to(t);
    require_same(grad_of([](const Variable& a) { return clamp(a, -1.0, 1.0); }, e, infs), {0, kInf, 0});
    require_same(grad_of([](const Variable& a) { return clamp(a, -1.0, std::nullopt); }, e, infs), {0, kInf, kInf});
  }
  // maximum/minimum of [nan, 1, 2, nan, 1] and [1, nan, 2, nan, 0]: with a NaN neither
  // operand loses, so both get the whole gradient; ties split it.
  const Tensor a = d({kNan, 1, 2, kNan, 1}), b = d({1, kNan, 2, kNan, 0});
  for (bool is_max : {true, false}) {
    INFO("maximum " << is_max);
    Variable av(a, true), bv(b, true);
    sum(is_max ? maximum(av, bv) : minimum(av, bv)).backward();
    require_same(av.grad(), {1, 1, 0.5, 1, is_max ? 1.0 : 0.0});
    require_same(bv.grad(), {1, 1, 0.5, 1, is_max ? 0.0 : 1.0});
  }
  // torch: maximum([1, 3, 2], [2, 1, 2]) with cotangent [inf, nan, inf]: a.grad [0, nan, inf],
  // b.grad [inf, 0, inf] (a loser gets 0, not 0·inf).
  Variable av(d({1, 3, 2}), true), bv(d({2, 1, 2}), true);
  sum(mul(maximum(av, bv), Variable(d({kInf, kNan, kInf})))).backward();
  require_same(av.grad(), {0, kNan, kInf});
  require_same(bv.grad(), {kInf, 0, kInf});
}

TEST_CASE("pow's special exponents and smooth_l1 at NaN as PyTorch", "[grad][parity]") {
  for (DType t : {DType::Float64, DType::Float32}) {
    INFO(t);
    // torch.pow(x, 0.5) is sqrt: at -inf NaN (std::pow: +inf), at -0.0 -0.0 with gradient -inf.
    const Tensor x = d({-kInf, -0.0, 4}).to(t);
    Variable xv(x, true);
    const Variable y = pow(xv, 0.5);
    require_same(y.data(), {kNan, -0.0, 2});
    REQUIRE(std::signbit(v(y.data())[1]));
    sum(y).backward();
    require_same(xv.grad(), {kNan, -kInf, 0.25});
    // pow(x, -1) and pow(x, -2) are 1/x and 1/(x*x): at -0.0, -inf and +inf.
    require_same(pow(d({-0.0, 2}).to(t), -1.0), {-kInf, 0.5});
    require_same(pow(d({-0.0, 2}).to(t), -2.0), {kInf, 0.25});
    // smooth_l1_loss(nan, 0): loss nan, gradient nan (d / beta), not sign(nan) = 0.
    Variable a(d({kNan, 0.5, 3}).to(t), true);
    sum(smooth_l1_loss(a, Variable(zeros({3}, t)), Reduction::None)).backward();
    require_same(a.grad(), {kNan, 0.5, 1});
  }
}

TEST_CASE("binary_cross_entropy at x = 0 and 1 divides by PyTorch's float epsilon", "[grad][parity]") {
  // torch float64: binary_cross_entropy([0, 1], [1, 0], reduction='sum') gradient
  // [-1000000003995.8029, 1000000003995.8029]: (x - y) / max(x (1 - x), 1e-12f).
  Variable x(d({0, 1}), true);
  sum(binary_cross_entropy(x, Variable(d({1, 0})), {}, Reduction::None)).backward();
  require_near(x.grad(), {-1000000003995.8029, 1000000003995.8029}, 1e-15);
}

TEST_CASE("div: the divisor's gradient stays finite where PyTorch's does", "[grad][parity]") {
  // torch float32: a = [1e-20, 3], b = [1e-20, 1e-20], g = [2, 1]:
  // a.grad = [2.0000000400817547e+20, 1.0000000200408773e+20], b.grad = [-2.0000000400817547e+20, -inf]
  for (DType t : {DType::Float32, DType::Float64}) {
    INFO(t);
    Variable av(d({1e-20, 3}).to(t), true), bv(d({1e-20, 1e-20}).to(t), true);
    sum(mul(div(av, bv), Variable(d({2, 1}).to(t)))).backward();
    if (t == DType::Float32) {
      require_same(av.grad(), {2.0000000400817547e+20, 1.0000000200408773e+20});
      require_same(bv.grad(), {-2.0000000400817547e+20, -kInf});
    } else {
      require_near(bv.grad(), {-2e20, -3e40}, 1e-15);
    }
  }
  // float32 a = [1, 1e-30], b = [1e-30, 1e-30]: b.grad = [-inf, -1.0000000150474662e+30]
  Variable av(d({1, 1e-30}).to(DType::Float32), true), bv(d({1e-30, 1e-30}).to(DType::Float32), true);
  sum(div(av, bv)).backward();
  require_same(bv.grad(), {-kInf, -1.0000000150474662e+30});
}

TEST_CASE("silu: its gradient near the float maximum as PyTorch's", "[grad][parity]") {
  // torch: silu([3.3e38, -3.3e38]) float32 with cotangent 2: gradient [2, -0]; float64 at ±1e308 the same.
  for (auto [t, big] : {std::pair{DType::Float32, 3.3e38}, std::pair{DType::Float64, 1e308}}) {
    INFO(t);
    const Tensor x = d({big, -big, 1.0}).to(t);
    const Tensor g = grad_of([](const Variable& a) { return silu(a); }, x, d({2, 2, 1}).to(t));
    require_near(g.narrow(0, 0, 2), {2, 0}, 0);
    require_near(g.narrow(0, 2, 1), {0.9276705118714869}, 1e-6);
    require_near(silu(Variable(x)).data().narrow(0, 1, 2), {0, 0.7310585786300049}, 1e-6);
  }
}

TEST_CASE("log_softmax and cross_entropy with logits near the float maximum", "[softmax][parity]") {
  // torch.log_softmax(float64 [1e300, 1e300, 0]) = [-log 2, -log 2, -1e300]
  require_near(log_softmax(d({1e300, 1e300, 0}), 0), {-0.6931471805599453, -0.6931471805599453, -1e300}, 1e-15);
  // float32 [3e38, 3e38, 0]: [-0.6931471824645996, ..., -3.0000000054977558e+38]
  require_same(log_softmax(d({3e38, 3e38, 0}).to(DType::Float32), 0),
               {-0.6931471824645996, -0.6931471824645996, -3.0000000054977558e+38});
  require_near(log_softmax(d({1e300, 1e300, 0}, {3, 1}), 0), {-0.6931471805599453, -0.6931471805599453, -1e300},
               1e-15);  // the strided (inner > 1) path
  // cross_entropy([[1e300, 1e300, 0]], [0]) = log 2, gradient [-0.5, 0.5, 0]
  Variable z(d({1e300, 1e300, 0}, {1, 3}), true);
  const Variable loss = cross_entropy(z, from_vector<int64_t>({0}));
  require_near(loss.data(), {0.6931471805599453}, 1e-15);
  loss.backward();
  require_near(z.grad(), {-0.5, 0.5, 0}, 1e-15);
}

TEST_CASE("softmax, log_softmax and the classification losses take bfloat16 and float16", "[softmax][loss][parity]") {
  // torch (bfloat16, CPU): softmax([[1, 2, 3], [0.5, -1, 2]], 1)[0] = [0.08984375, 0.2451171875, 0.6640625];
  // cross_entropy(x, [0, 2]) = 1.328125 with gradient [-0.455078125, 0.12255859375, 0.333984375, ...];
  // weighted by [1, 2, 3]: 0.78125; label smoothing 0.1: 1.3515625; nll_loss(x, [0, 2]) = -1.5, and
  // its gradient is +0 off the targets. PyTorch rounds some steps to bfloat16 where ddl computes in
  // float32 and rounds once, so values agree to a bfloat16 rounding or two. (PyTorch 1.13 has no
  // float16 CPU kernels for these; ddl computes float16 the same way.)
  const Tensor tg = from_vector<int64_t>({0, 2});
  for (DType t : {DType::BFloat16, DType::Float16}) {
    INFO(t);
    const Tensor x = d({1, 2, 3, 0.5, -1, 2}, {2, 3}).to(t);
    const auto near = [](const Tensor& got, std::vector<double> want) {
      const auto g = v(got);
      for (size_t i = 0; i < want.size(); ++i) REQUIRE(g[i] == Approx(want[i]).margin(0.01).epsilon(0.01));
    };
    REQUIRE(softmax(x, 1).dtype() == t);
    near(softmax(x, 1), {0.08984375, 0.2451171875, 0.6640625});
    near(log_softmax(x, 1), {-2.40625, -1.40625, -0.40625});
    Variable z(x, true);
    const Variable l = cross_entropy(z, tg);
    REQUIRE(l.dtype() == t);
    near(l.data(), {1.328125});
    l.backward();
    REQUIRE(z.grad().dtype() == t);
    near(z.grad(), {-0.455078125, 0.12255859375, 0.333984375});
    near(cross_entropy(Variable(x), tg, d({1, 2, 3}).to(t), {}).data(), {0.78125});
    near(cross_entropy(Variable(x), tg, CrossEntropyOptions{Reduction::Mean, -100, 0.1}).data(), {1.3515625});
    Variable lp(x, true);
    const Variable n = nll_loss(lp, tg);
    near(n.data(), {-1.5});
    n.backward();
    require_same(lp.grad(), {-0.5, 0, 0, 0, 0, -0.5});
    REQUIRE_FALSE(std::signbit(v(lp.grad())[1]));
  }
}

TEST_CASE("cross_entropy and nll_loss take an unbatched input [C] with a 0-d target", "[loss][parity]") {
  // torch: cross_entropy([1, 2, 3], 2) = 0.4076059644 (0-d for every reduction), gradient softmax - onehot.
  const Tensor x = d({1, 2, 3}), t = from_vector<int64_t>({2}).reshape({});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    Variable z(x, true);
    const Variable l = cross_entropy(z, t, CrossEntropyOptions{r, -100, 0.0});
    REQUIRE(l.shape() == Shape{});
    require_near(l.data(), {0.4076059644443804}, 1e-12);
    l.backward();
    require_near(z.grad(), {0.09003057317038043, 0.24472847105479764, -0.3347590442251782}, 1e-12);
    const Variable n = nll_loss(log_softmax(Variable(x), 0), t, r);
    REQUIRE(n.shape() == Shape{});
    require_near(n.data(), {0.4076059644443804}, 1e-12);
    require_near(cross_entropy(Variable(x), t, d({1, 1, 2}), CrossEntropyOptions{r, -100, 0.0}).data(),
                 {r == Reduction::Mean ? 0.4076059644443804 : 0.8152119288887608}, 1e-12);
  }
  require_near(cross_entropy(x, t), {0.4076059644443804}, 1e-12);
  require_near(nll_loss(log_softmax(x, 0), t), {0.4076059644443804}, 1e-12);
  // torch: a [1] target with a [C] input is a size mismatch.
  REQUIRE_THROWS_WITH(cross_entropy(Variable(x), from_vector<int64_t>({2})), Catch::StartsWith("cross_entropy:"));
}

TEST_CASE("losses whose every target is ignored: NaN mean, zero gradient", "[loss][parity]") {
  // torch: cross_entropy / nll_loss with targets [-100, -100], with or without weight and label
  // smoothing: Mean is nan and the gradient 0; Sum is 0.
  const Tensor x = d({1, 2, 3, 1, 0, -1}, {2, 3});
  const Tensor target = from_vector<int64_t>({-100, -100});
  const Tensor w = d({1, 2, 3});
  for (Reduction r : {Reduction::Mean, Reduction::Sum}) {
    for (double eps : {0.0, 0.1}) {
      INFO("mean " << (r == Reduction::Mean) << " smoothing " << eps);
      const CrossEntropyOptions o{r, -100, eps};
      for (bool weighted : {false, true}) {
        INFO("weighted " << weighted);
        Variable z(x, true);
        const Variable l = cross_entropy(z, target, weighted ? w : Tensor(), o);
        require_same(l.data(), {r == Reduction::Mean ? kNan : 0.0});
        l.backward();
        require_same(z.grad(), {0, 0, 0, 0, 0, 0});
        if (eps > 0) continue;
        Variable lp(x, true);
        const Variable n = nll_loss(lp, target, weighted ? w : Tensor(), r);
        require_same(n.data(), {r == Reduction::Mean ? kNan : 0.0});
        // Its double-backward form too.
        const Variable g = autograd::grad({n}, {lp}, {}, std::nullopt, true)[0];
        require_same(g.data(), {0, 0, 0, 0, 0, 0});
        n.backward();
        require_same(lp.grad(), {0, 0, 0, 0, 0, 0});
      }
    }
  }
  // A class weight of 0 on every (kept) target is 0/0 in PyTorch too: NaN loss and gradient.
  Variable z(x, true);
  const Variable l = cross_entropy(z, from_vector<int64_t>({0, 0}), d({0, 1, 1}));
  require_same(l.data(), {kNan});
  l.backward();
  require_same(z.grad(), {kNan, kNan, kNan, kNan, kNan, kNan});
}

TEST_CASE("nll_loss without weights differentiates twice", "[loss][grad][parity]") {
  // torch: nll_loss([[1, 2, 3], [1, 0, -1]], [0, 2]) gradient [[-0.5, 0, 0], [0, 0, -0.5]], itself
  // differentiable (NllLossBackwardBackward0): linear in the incoming gradient, here s·1.
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    Variable lp(d({1, 2, 3, 1, 0, -1}, {2, 3}), true), s(d({3.0}).reshape({}), true);
    const Variable n = mul(sum(nll_loss(lp, from_vector<int64_t>({0, 2}), r)), s);
    const Variable g = autograd::grad({n}, {lp}, {}, std::nullopt, /*create_graph=*/true)[0];
    const double k = r == Reduction::Mean ? -1.5 : -3.0;
    require_same(g.data(), {k, 0, 0, 0, 0, k});
    // d(sum g)/ds = sum(g) / s.
    const Variable h = autograd::grad({sum(g)}, {s})[0];
    require_same(h.data(), {2 * k / 3});
  }
  // torch: an inf incoming gradient gives [[-inf, 0, 0], [0, 0, -inf]] (zero-filled, not 0·inf).
  Variable lp(d({1, 2, 3, 1, 0, -1}, {2, 3}), true);
  sum(mul(nll_loss(lp, from_vector<int64_t>({0, 2}), Reduction::None), Variable(d({kInf, kInf})))).backward();
  require_same(lp.grad(), {-kInf, 0, 0, 0, 0, -kInf});
}

TEST_CASE("softmax and log_softmax of a 0-d input differentiate twice", "[softmax][grad][parity]") {
  // torch: softmax(x, 0) of a 0-d x is 1, log_softmax 0; both gradients 0, and their gradients 0.
  for (bool log : {false, true}) {
    INFO("log " << log);
    Variable x(d({2.0}).reshape({}), true);
    const Variable y = log ? log_softmax(x, 0) : softmax(x, 0);
    require_same(y.data(), {log ? 0.0 : 1.0});
    const Variable g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    REQUIRE(g.shape() == Shape{});
    require_same(g.data(), {0});
    const Variable h = autograd::grad({g}, {x}, {}, std::nullopt, false, /*allow_unused=*/true)[0];
    REQUIRE((!h.defined() || v(h.data()) == std::vector<double>{0}));
  }
}

TEST_CASE("var: gradient of a 0-d input with nothing left after the correction", "[grad_parity][var]") {
  // torch.var(x) of a 0-d x (correction 1): the value is NaN, and 1.13's gradient is
  // g·inf (inf, -inf for g = -2, NaN for g = 0) with no dependence on x, so a double
  // backward is 0. 2·(x − mean)/0 here gave 0·inf = NaN.
  for (DType t : {DType::Float32, DType::Float64}) {
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{}, std::vector<int64_t>{0}}) {
      Variable xv(d({2.0}, {1}).reshape({}).to(t), true);
      const Variable y = var(xv, dims, 1, false);
      require_same(y.data(), {kNan});
      const Variable g = autograd::grad({y}, {xv}, {Variable(d({-2.0}, {1}).reshape({}).to(t))}, std::nullopt, true)[0];
      require_same(g.data(), {-kInf});
      const Variable g0 = autograd::grad({var(xv, dims, 1, true)}, {xv}, {Variable(zeros({}, t))}, std::nullopt)[0];
      require_same(g0.data(), {kNan});
      CHECK(!g.requires_grad());  // as PyTorch: nothing to differentiate again
    }
  }
}

TEST_CASE("kl_div: double backward at zero targets", "[grad_parity][kl_div]") {
  // x = [-1, -2, -0.5], t = [0, 0.3, 0], sum reduction. PyTorch 1.13: the target's
  // gradient is [nan, log 0.3 + 1 + 2, nan]; differentiating its sum gives -1 for every
  // x (zero targets too) and [nan, 1/0.3, nan] for t.
  Variable x(d({-1, -2, -0.5}), true), t(d({0, 0.3, 0}), true);
  const Variable l = kl_div(x, t, KLDivReduction::Sum, false);
  const auto g = autograd::grad({l}, {x, t}, {}, std::nullopt, true);
  require_same(g[1].data(), {kNan, std::log(0.3) + 3, kNan});
  const auto gg = autograd::grad({sum(g[1])}, {x, t});
  require_same(gg[0].data(), {-1, -1, -1});
  const auto tt = v(gg[1].data());
  CHECK(std::isnan(tt[0]));
  CHECK(tt[1] == Approx(1 / 0.3));
  CHECK(std::isnan(tt[2]));
}

TEST_CASE("var: float32 gradient with a large mean, with and without create_graph", "[grad_parity][var]") {
  // Values near 1e6 (float32 steps of 0.0625): x − mean must be formed in float64 as in
  // the forward, or the gradient is off by a fraction of the spread (1% was seen).
  std::vector<double> xs(64);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 1e6 + static_cast<double>((i * 37 + 11) % 101) / 16;
  const Tensor x32 = d(xs).to(DType::Float32);
  Variable ref(x32.to(DType::Float64), true);
  const std::vector<double> want = v(autograd::grad({var(ref)}, {ref})[0].data());
  for (bool create_graph : {false, true}) {
    INFO("create_graph " << create_graph);
    Variable xv(x32, true);
    const std::vector<double> got = v(autograd::grad({var(xv)}, {xv}, {}, std::nullopt, create_graph)[0].data());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-6).margin(1e-9));
  }
}
