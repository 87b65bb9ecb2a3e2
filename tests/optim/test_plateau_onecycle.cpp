// OneCycleLR and ReduceLROnPlateau: rates (and OneCycle's momentum) step by step
// against PyTorch 1.13 (tests/golden/optim.py), resuming, and argument checks.
#include <catch2/catch.hpp>
#include <cmath>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::optim;

namespace {
void require_rates(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(want[i]).epsilon(1e-12).margin(1e-15));
}

// Rates and momenta before each of 10 steps of SGD(lr 1, momentum 0.9) under OneCycleLR(0.5, 10).
std::pair<std::vector<double>, std::vector<double>> one_cycle(OneCycleOptions o) {
  Variable w(zeros({1}), true);
  SGD opt({w}, SGDOptions(1.0).momentum(0.9));
  OneCycleLR s(opt, 0.5, 10, o);
  std::vector<double> lrs, moms;
  for (int i = 0; i < 10; ++i) {
    lrs.push_back(opt.param_groups()[0].lr());
    moms.push_back(opt.param_groups()[0].options.at("momentum"));
    s.step();
  }
  return {lrs, moms};
}
}  // namespace

TEST_CASE("OneCycleLR matches PyTorch, cosine two-phase and linear three-phase", "[optim][scheduler]") {
  const auto [lrs, moms] = one_cycle({});
  require_rates(lrs, {0.020000000000000018, 0.26000000000000001, 0.5, 0.47524231600673683, 0.40587282697488153,
                      0.30563101096814466, 0.19437098903185537, 0.094129173025118487, 0.024759683993263143,
                      1.9999999999999999e-06});
  require_rates(
      moms, {0.94999999999999996, 0.89999999999999991, 0.84999999999999998, 0.85495155660487898, 0.86882550990706331,
             0.88887395330218422, 0.91112604669781572, 0.93117449009293662, 0.94504844339512095, 0.94999999999999996});
  const auto [lin, lin_moms] = one_cycle({.cos_anneal = false, .three_phase = true});
  require_rates(lin, {0.02, 0.26000000000000001, 0.5, 0.26000000000000001, 0.020000000000000018, 0.016000399999999998,
                      0.012000799999999999, 0.0080012, 0.0040015999999999975, 1.9999999999985307e-06});
  require_rates(lin_moms, {0.95, 0.9, 0.85, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95});
}

TEST_CASE("OneCycleLR resumes in closed form, cycles Adam's beta1, and checks its arguments", "[optim][scheduler]") {
  Variable w(zeros({1}), true);
  Adam adam({w}, AdamOptions(1.0));
  OneCycleLR s(adam, 0.5, 10);
  REQUIRE(adam.param_groups()[0].options.at("beta1") == Approx(0.95));
  s.set_step(4);
  REQUIRE(adam.param_groups()[0].lr() == Approx(0.40587282697488153).epsilon(1e-12));
  REQUIRE(adam.param_groups()[0].options.at("beta1") == Approx(0.86882550990706331).epsilon(1e-12));
  REQUIRE_THROWS_WITH(s.set_step(11), Catch::Contains("tried to step 11 times"));
  REQUIRE_THROWS_WITH(OneCycleLR(adam, 0.5, 3), Catch::Contains("a phase of the cycle would be empty"));
  REQUIRE_THROWS_WITH(OneCycleLR(adam, 0.5, 0), Catch::Contains("total_steps must be >= 1"));
  // Adagrad has neither momentum nor betas: cycling momentum is refused.
  Adagrad adagrad({w}, {});
  REQUIRE_THROWS_WITH(OneCycleLR(adagrad, 0.5, 10), Catch::Contains("cycle_momentum needs an optimizer"));
  REQUIRE_NOTHROW(OneCycleLR(adagrad, 0.5, 10, {.cycle_momentum = false}));
}

TEST_CASE("ReduceLROnPlateau matches PyTorch on a metric sequence", "[optim][scheduler]") {
  const std::vector<double> metrics = {1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  auto rates = [&](PlateauOptions o) {
    Variable w(zeros({1}), true);
    SGD opt({w}, SGDOptions(1.0));
    ReduceLROnPlateau s(opt, o);
    std::vector<double> out;
    for (double m : metrics) {
      s.step(m);
      out.push_back(opt.param_groups()[0].lr());
    }
    return out;
  };
  require_rates(rates({.factor = 0.5, .patience = 2}), {1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25});
  require_rates(rates({.maximize = true,
                       .factor = 0.5,
                       .patience = 1,
                       .threshold = 0.05,
                       .relative_threshold = false,
                       .cooldown = 2,
                       .min_lr = 0.2}),
                {1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.2, 0.2});
}

TEST_CASE("ReduceLROnPlateau state resumes identically; NaN is no improvement; bad state is refused",
          "[optim][scheduler]") {
  Variable w(zeros({1}), true);
  SGD a({w}, SGDOptions(1.0)), b({w}, SGDOptions(1.0));
  ReduceLROnPlateau sa(a, {.patience = 1}), sb(b, {.patience = 1});
  sa.step(1.0);
  sa.step(std::nan(""));
  REQUIRE(sa.num_bad_steps() == 1);
  REQUIRE(sa.best() == 1.0);
  sb.load_state(sa.state());
  b.param_groups()[0].set_lr(a.param_groups()[0].lr());
  for (double m : {2.0, 0.5, 0.7, 0.8}) {
    sa.step(m);
    sb.step(m);
    REQUIRE(a.param_groups()[0].lr() == b.param_groups()[0].lr());
  }
  REQUIRE(a.param_groups()[0].lr() == Approx(0.01));
  auto st = sa.state();
  st["num_bad_steps"] = -1;
  REQUIRE_THROWS_WITH(sb.load_state(st), Catch::Contains("'num_bad_steps' must be a non-negative integer"));
  st.erase("best");
  REQUIRE_THROWS_WITH(sb.load_state(st), Catch::Contains("lacks 'best'"));
  REQUIRE_THROWS_WITH(ReduceLROnPlateau(a, {.factor = 1.0}), Catch::Contains("factor must be in (0, 1)"));
}
