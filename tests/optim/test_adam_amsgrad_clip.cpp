// Adam / AdamW amsgrad over 1,001 steps and AdamW's default weight decay against PyTorch 1.13, gradient
// clipping by any norm and by value, and optimizer options that a typo would otherwise turn into 0.
// Golden values: tests/golden/optim_amsgrad_clip.py.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>

#include "tests/common/error_of.h"
#include "tests/common/optim_steps.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::optim;
using test::error_of;
using test::require_values;

namespace {

// Rosenbrock's function from (-1.5, 2): the gradient's scale changes by orders of magnitude along the valley.
std::vector<double> run_rosenbrock(const std::function<std::unique_ptr<Optimizer>(std::vector<Variable>)>& make,
                                   int steps = 1001) {
  Variable x(from_vector<double>({-1.5}), true), y(from_vector<double>({2.0}), true);
  auto opt = make({x, y});
  for (int i = 0; i < steps; ++i) {
    opt->zero_grad();
    const Variable r = y - x * x;
    sum((1.0 - x) * (1.0 - x) + 100.0 * (r * r)).backward();
    opt->step();
  }
  return {x.data().item(), y.data().item()};
}

// 1,001 steps compound rounding: PyTorch's order of float64 operations differs from ours in places.
void require_after_1001_steps(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(want[i]).epsilon(1e-9).margin(1e-12));
}

}  // namespace

TEST_CASE("Adam and AdamW amsgrad match PyTorch over 1,001 steps", "[optim]") {
  require_after_1001_steps(
      run_rosenbrock([](auto p) { return std::make_unique<Adam>(p, AdamOptions(0.02).amsgrad(true)); }),
      {0.6295665887584696, 0.3953043508933603});
  require_after_1001_steps(
      run_rosenbrock([](auto p) {
        return std::make_unique<Adam>(p, AdamOptions(0.01).betas({0.8, 0.9}).weight_decay(0.1).amsgrad(true));
      }),
      {-1.2034337720296078, 1.4541067130846823});
  require_after_1001_steps(run_rosenbrock([](auto p) {
                             return std::make_unique<AdamW>(p, AdamWOptions(0.02).weight_decay(0.1).amsgrad(true));
                           }),
                           {0.5513616359368424, 0.30318308520496612});
  // Without amsgrad the same problem ends elsewhere: the option is not a no-op.
  require_after_1001_steps(run_rosenbrock([](auto p) { return std::make_unique<Adam>(p, AdamOptions(0.02)); }),
                           {0.77390630433618635, 0.59825791670412054});
}

TEST_CASE("AdamW's default weight decay is PyTorch's 1e-2", "[optim]") {
  require_after_1001_steps(run_rosenbrock([](auto p) { return std::make_unique<AdamW>(p, AdamWOptions(0.02)); }),
                           {0.76661703290068461, 0.58704617074204557});
  Variable w(from_vector<double>({1}), true);
  REQUIRE(AdamW({w}).param_groups()[0].options.at("weight_decay") == 1e-2);
  REQUIRE(Adam({w}, {}).param_groups()[0].options.at("weight_decay") == 0);
}

TEST_CASE("amsgrad state is saved and restored", "[optim]") {
  Variable w(from_vector<double>({1, -2}), true);
  Adam opt({w}, AdamOptions(0.1).amsgrad(true));
  sum(w * w).backward();
  opt.step();
  bool found = false;
  for (const auto& [name, t] : opt.state_tensors()) found |= name == "state.0.max_exp_avg_sq";
  REQUIRE(found);
}

TEST_CASE("clip_grad_norm_ of every norm type matches PyTorch", "[optim][clip]") {
  struct Case {
    double p, norm, a0, a1, b0;
  };
  const Case cases[] = {
      {2.0, 13, 1.1538460650887643, -1.5384614201183524, 4.6153842603550572},
      {1.0, 19, 0.78947364265928199, -1.0526315235457093, 3.157894570637128},
      {INFINITY, 12, 1.249999895833342, -1.6666665277777895, 4.9999995833333681},
      {3.0, 12.207054953820634, 1.2287975132370237, -1.6383966843160316, 4.9151900529480947},
      {0.5, 51.784609690826528, 0.28966134532816329, -0.38621512710421774, 1.1586453813126532},
      {0.0, 2, 3, -4, 12},
      {-INFINITY, 3, 3, -4, 12},
  };
  for (const Case& c : cases) {
    INFO("norm_type " << c.p);
    Variable a(zeros({2}, DType::Float64), true), b(zeros({1}, DType::Float64), true), none(zeros({1}), true);
    a.set_grad(from_vector<double>({3, -4}));
    b.set_grad(from_vector<double>({12}));
    REQUIRE(clip_grad_norm_({a, none, b}, 5.0, c.p) == Approx(c.norm).epsilon(1e-12));
    require_values(to_vector<double>(a.grad()), {c.a0, c.a1});
    require_values(to_vector<double>(b.grad()), {c.b0});
  }
}

TEST_CASE("clip_grad_norm_ with a non-finite norm: NaN gradients, or an error when asked", "[optim][clip]") {
  Variable a(zeros({2}), true);
  a.set_grad(from_vector<float>({INFINITY, 1}));
  REQUIRE_THAT(error_of([&] { clip_grad_norm_({a}, 1.0, 2.0, true); }),
               Catch::Contains("clip_grad_norm_") && Catch::Contains("non-finite"));
  REQUIRE(to_vector<float>(a.grad())[1] == 1.0f);  // left alone
  // PyTorch: coef = 1 / inf = 0, so inf * 0 = NaN and 1 * 0 = 0.
  REQUIRE(std::isinf(clip_grad_norm_({a}, 1.0)));
  REQUIRE(std::isnan(to_vector<float>(a.grad())[0]));
  REQUIRE(to_vector<float>(a.grad())[1] == 0.0f);
  a.set_grad(from_vector<float>({NAN, 1}));
  REQUIRE(std::isnan(clip_grad_norm_({a}, 1.0)));
  REQUIRE(std::isnan(to_vector<float>(a.grad())[1]));
}

TEST_CASE("clip_grad_value_ clamps every element", "[optim][clip]") {
  Variable a(zeros({4}), true);
  a.set_grad(from_vector<float>({-3, 0.5, 2, -0.1}));
  clip_grad_value_({a}, 1.0);
  REQUIRE(to_vector<float>(a.grad()) == std::vector<float>{-1, 0.5, 1, -0.1f});
}

TEST_CASE("optimizer options: a misspelt key is an error naming it and the known ones", "[optim]") {
  Variable w(from_vector<double>({1}), true);
  Adam opt({w}, {});
  REQUIRE_THAT(error_of([&] {
                 opt.add_param_group({Variable(zeros({1}), true)}, {{"betas1", 0.5}});
               }),
               Catch::Contains("'betas1'") && Catch::Contains("beta1, beta2"));
  opt.param_groups()[0].options["lrr"] = 0.5;  // a typo for "lr"
  sum(w * w).backward();
  REQUIRE_THAT(error_of([&] { opt.step(); }), Catch::Contains("'lrr'") && Catch::Contains("amsgrad, beta1"));
  REQUIRE(w.data().item() == 1.0);
  opt.param_groups()[0].options.erase("lrr");
  opt.param_groups()[0].options.erase("eps");
  REQUIRE_THAT(error_of([&] { opt.step(); }), Catch::Contains("lacks the option 'eps'"));
}
