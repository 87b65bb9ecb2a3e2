// Optimizers: PyTorch's values after 3 steps (tests/golden/optim.py), schedules,
// gradient clipping, and state save/restore continuing identically.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "tests/common/optim_steps.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::optim;

using test::require_values;

TEST_CASE("SGD variants match PyTorch", "[optim]") {
  // Plain SGD by hand: w <- w - 0.1 * 2cw, three times.
  require_values(test::run_quadratic([](auto p) { return std::make_unique<SGD>(p, SGDOptions{.lr = 0.1}); }),
                 {0.512, -0.128});
  require_values(test::run_quadratic([](auto p) {
                   return std::make_unique<SGD>(p, SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1});
                 }),
                 {0.024318999999999934, 1.726002});
  require_values(test::run_quadratic([](auto p) {
                   return std::make_unique<SGD>(p, SGDOptions{.lr = 0.1, .momentum = 0.9, .dampening = 0.5});
                 }),
                 {0.252, 1.5520000000000003});
  require_values(test::run_quadratic([](auto p) {
                   return std::make_unique<SGD>(
                       p, SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
                 }),
                 {-0.11165109425900013, 0.60565913011799999});
  REQUIRE_THROWS_WITH(SGD({}, SGDOptions{.lr = 0.1, .nesterov = true}), Catch::Contains("nesterov needs momentum"));
}

TEST_CASE("Adam and AdamW match PyTorch", "[optim]") {
  require_values(test::run_quadratic([](auto p) { return std::make_unique<Adam>(p, AdamOptions{.lr = 0.1}); }),
                 {0.70158627294603015, -1.7006233915360325});
  require_values(test::run_quadratic([](auto p) {
                   return std::make_unique<Adam>(
                       p, AdamOptions{.lr = 0.1, .beta1 = 0.8, .beta2 = 0.9, .weight_decay = 0.1});
                 }),
                 {0.70171922678621135, -1.7006834045513854});
  require_values(test::run_quadratic(
                     [](auto p) { return std::make_unique<AdamW>(p, AdamWOptions{.lr = 0.1, .weight_decay = 0.1}); }),
                 {0.6751012216400698, -1.6443686830529762});
}

TEST_CASE("parameters without gradients are left alone; groups have their own options", "[optim]") {
  Variable a(from_vector<double>({1}), true), b(from_vector<double>({1}), true);
  SGD opt({a}, {.lr = 0.1});
  opt.add_param_group({b}, {{"lr", 1.0}});
  REQUIRE(opt.param_groups()[1].options.at("momentum") == 0);
  sum(a * 2.0).backward();
  opt.step();
  REQUIRE(a.data().item() == Approx(0.8));
  REQUIRE(b.data().item() == 1.0);
  sum(b * 2.0).backward();
  opt.step();
  REQUIRE(b.data().item() == Approx(-1.0));
  REQUIRE_THROWS_WITH(opt.add_param_group({a}), Catch::Contains("two groups"));
  REQUIRE_THROWS_WITH(opt.add_param_group({Variable(zeros({1}), true)}, {{"betas", 1}}),
                      Catch::Contains("unknown option 'betas'"));
}

TEST_CASE("learning-rate schedules match PyTorch", "[optim][scheduler]") {
  auto lrs = [](auto make) {
    Variable w(zeros({1}), true);
    SGD opt({w}, {.lr = 1.0});
    auto s = make(opt);
    std::vector<double> out;
    for (int i = 0; i < 8; ++i) {
      out.push_back(opt.param_groups()[0].lr());
      s->step();
    }
    return out;
  };
  require_values(lrs([](Optimizer& o) { return std::make_unique<StepLR>(o, 3, 0.5); }),
                 {1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25});
  require_values(lrs([](Optimizer& o) {
                   return std::make_unique<MultiStepLR>(o, std::vector<int64_t>{2, 5}, 0.1);
                 }),
                 {1, 1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01});
  const auto cos = lrs([](Optimizer& o) { return std::make_unique<CosineAnnealingLR>(o, 10, 0.01); });
  const std::vector<double> torch_cos = {
      1,     0.9757729755661011,  0.90546341221559901, 0.79595369988477427, 0.65796341221559906,
      0.505, 0.35203658778440106, 0.21404630011522585};
  for (size_t i = 0; i < cos.size(); ++i) REQUIRE(cos[i] == Approx(torch_cos[i]).epsilon(1e-12));
  // Warm-up from 0.1 to 1 over 4 steps, then cosine over 4 steps to 0.
  Variable w(zeros({1}), true);
  SGD opt({w}, {.lr = 1.0});
  WarmupLR warm(opt, 4, 0.1, std::make_shared<CosineAnnealingLR>(opt, 4));
  std::vector<double> got;
  for (int i = 0; i < 9; ++i) {
    got.push_back(opt.param_groups()[0].lr());
    warm.step();
  }
  require_values(got, {0.1, 0.325, 0.55, 0.775, 1, 0.85355339059327373, 0.5, 0.14644660940672627, 0});
}

TEST_CASE("clip_grad_norm_ rescales to the maximum norm", "[optim]") {
  Variable a(from_vector<double>({0, 0}), true), b(from_vector<double>({0}), true);
  a.set_grad(from_vector<double>({3, 0}));
  b.set_grad(from_vector<double>({4}));
  REQUIRE(clip_grad_norm_({a, b}, 1.0) == Approx(5));
  REQUIRE(to_vector<double>(a.grad())[0] == Approx(0.6).epsilon(1e-6));
  REQUIRE(to_vector<double>(b.grad())[0] == Approx(0.8).epsilon(1e-6));
  REQUIRE(clip_grad_norm_({a, b}, 10.0) == Approx(1).epsilon(1e-5));
  REQUIRE(to_vector<double>(b.grad())[0] == Approx(0.8).epsilon(1e-6));
}

TEST_CASE("optimizer state saved mid-run resumes identically", "[optim][checkpoint]") {
  const auto path =
      (std::filesystem::temp_directory_path() / ("ddl_optim_" + std::to_string(::getpid()) + ".safetensors")).string();
  auto fresh = [] { return Variable(from_vector<double>({1, -2}), true); };
  const Variable c(from_vector<double>({1, 3}));
  auto do_step = [&](Optimizer& opt, Variable& w) {
    opt.zero_grad();
    sum(c * w * w).backward();
    opt.step();
  };
  for (int kind = 0; kind < 2; ++kind) {
    auto make = [&](Variable w) -> std::unique_ptr<Optimizer> {
      if (kind == 0) return std::make_unique<SGD>(std::vector<Variable>{w}, SGDOptions{.lr = 0.1, .momentum = 0.9});
      return std::make_unique<Adam>(std::vector<Variable>{w}, AdamOptions{.lr = 0.1});
    };
    Variable w1 = fresh();
    auto o1 = make(w1);
    for (int i = 0; i < 5; ++i) do_step(*o1, w1);
    Variable w2 = fresh();
    auto o2 = make(w2);
    for (int i = 0; i < 2; ++i) do_step(*o2, w2);
    save_optimizer(*o2, path);
    Variable w3(w2.data().clone(), true);
    auto o3 = make(w3);
    load_optimizer(*o3, path);
    for (int i = 0; i < 3; ++i) do_step(*o3, w3);
    REQUIRE(to_vector<double>(w3.data()) == to_vector<double>(w1.data()));
  }
  std::filesystem::remove(path);
}

// Found by tests/fuzz/fuzz_snapshot: std::stoul on a checkpoint's text threw
// std::invalid_argument (past every catch of ddl::Error) and read "-1" as 2^64 - 1.
TEST_CASE("optimizer load_state rejects malformed metadata with a ddl::Error", "[optim][checkpoint]") {
  Variable w(from_vector<double>({1, -2}), true);
  SGD opt({w}, SGDOptions{.lr = 0.1, .momentum = 0.9});
  const std::map<std::string, std::string> good = opt.state_metadata();
  auto with = [&](const std::string& key, const std::string& value) {
    auto m = good;
    m[key] = value;
    return m;
  };
  REQUIRE_NOTHROW(opt.load_state({}, good));
  for (const char* bad : {"", "x", "-1", "1x", " 1", "99999999999999999999999"})
    REQUIRE_THROWS_AS(opt.load_state({}, with("group.0.num_params", bad)), ddl::Error);
  for (const char* bad : {"", "fast", "nan", "inf", "0.1.2"})
    REQUIRE_THROWS_AS(opt.load_state({}, with("group.0.momentum", bad)), ddl::Error);
  const Tensor buf = from_vector<double>({0, 0});
  for (const char* name : {"state.x.momentum_buffer", "state.-1.momentum_buffer", "state..momentum_buffer"})
    REQUIRE_THROWS_AS(opt.load_state({{name, buf}}, good), ddl::Error);
  REQUIRE_NOTHROW(opt.load_state({{"state.0.momentum_buffer", buf}}, good));
}
