// RMSprop and Adagrad: PyTorch 1.13's values after 3 steps (tests/golden/optim.py),
// argument checks, and state saved mid-run resuming identically.
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/common/optim_steps.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::optim;

using test::require_values;

TEST_CASE("RMSprop matches PyTorch", "[optim]") {
  require_values(test::run_quadratic([](auto p) { return std::make_unique<RMSprop>(p, RMSpropOptions{.lr = 0.01}); }),
                 {0.77998227324363512, -1.7753494426029548});
  require_values(
      test::run_quadratic([](auto p) {
        return std::make_unique<RMSprop>(
            p, RMSpropOptions{.lr = 0.01, .alpha = 0.9, .weight_decay = 0.1, .momentum = 0.5, .centered = true});
      }),
      {0.88241836581146627, -1.8816602308637735});
  REQUIRE_THROWS_WITH(RMSprop({}, {.lr = -1}), Catch::Contains("RMSprop: lr, alpha"));
}

TEST_CASE("Adagrad matches PyTorch", "[optim]") {
  require_values(test::run_quadratic([](auto p) { return std::make_unique<Adagrad>(p, AdagradOptions{.lr = 0.1}); }),
                 {0.78045618135680983, -1.7758215150100747});
  require_values(
      test::run_quadratic([](auto p) {
        return std::make_unique<Adagrad>(
            p, AdagradOptions{.lr = 0.1, .lr_decay = 0.5, .weight_decay = 0.1, .initial_accumulator_value = 0.2});
      }),
      {0.83145312376542968, -1.82628104548915});
  REQUIRE_THROWS_WITH(Adagrad({}, {.eps = -1}), Catch::Contains("Adagrad: lr, lr_decay"));
}

TEST_CASE("RMSprop and Adagrad state saved mid-run resumes identically", "[optim][checkpoint]") {
  const auto path =
      (std::filesystem::temp_directory_path() / ("ddl_optim_rms_" + std::to_string(::getpid()) + ".safetensors"))
          .string();
  const Variable c(from_vector<double>({1, 3}));
  auto do_step = [&](Optimizer& opt, Variable& w) {
    opt.zero_grad();
    sum(c * w * w).backward();
    opt.step();
  };
  for (int kind = 0; kind < 2; ++kind) {
    auto make = [&](Variable w) -> std::unique_ptr<Optimizer> {
      if (kind == 0)
        return std::make_unique<RMSprop>(std::vector<Variable>{w},
                                         RMSpropOptions{.lr = 0.01, .momentum = 0.9, .centered = true});
      return std::make_unique<Adagrad>(std::vector<Variable>{w}, AdagradOptions{.lr = 0.1, .lr_decay = 0.1});
    };
    Variable w1(from_vector<double>({1, -2}), true);
    auto o1 = make(w1);
    for (int i = 0; i < 5; ++i) do_step(*o1, w1);
    Variable w2(from_vector<double>({1, -2}), true);
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
