// Adamax, NAdam, RAdam, Rprop and ASGD: PyTorch 1.13's parameters after 60 steps on a small quartic
// (tests/golden/optim_extra.py), their defaults, their argument checks, and state saved mid-run
// resuming identically.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <memory>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::optim;

namespace {

using Make = std::function<std::unique_ptr<Optimizer>(std::vector<Variable>)>;

// loss = sum(c * w * w + 0.25 * w^4 - s * w), negated when maximizing (as the golden script).
void do_step(Optimizer& opt, const Variable& w, bool maximize) {
  const Variable c(from_vector<double>({1.0, 3.0, 0.5, 2.0})), s(from_vector<double>({0.5, -1.0, 2.0, 0.0}));
  opt.zero_grad();
  const Variable loss = sub(add(sum(c * w * w), mul(sum(w * w * w * w), 0.25)), sum(s * w));
  (maximize ? neg(loss) : loss).backward();
  opt.step();
}

Variable start() { return Variable(from_vector<double>({1.0, -2.0, 0.5, 3.0}), true); }

std::vector<double> run(const Make& make, bool maximize, int steps = 60) {
  Variable w = start();
  auto opt = make({w});
  for (int i = 0; i < steps; ++i) do_step(*opt, w, maximize);
  return to_vector<double>(w.data());
}

// Sixty steps compound rounding differences (PyTorch's addcdiv, division by scalars): 1e-10 relative.
void require_after_60_steps(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(want[i]).epsilon(1e-10).margin(1e-13));
  }
}

Tensor state_named(const Optimizer& opt, const std::string& name) {
  for (const auto& [k, t] : opt.state_tensors())
    if (k == name) return t;
  FAIL("no state " << name);
  return {};
}

}  // namespace

TEST_CASE("Adamax matches PyTorch over 60 steps", "[optim]") {
  require_after_60_steps(run([](auto p) { return std::make_unique<Adamax>(p); }, false),
                         {0.88704430064268536, -1.8816503105073215, 0.61600433226960305, 2.8808317184029217});
  require_after_60_steps(run(
                             [](auto p) {
                               return std::make_unique<Adamax>(
                                   p,
                                   AdamaxOptions(0.05).betas({0.8, 0.99}).eps(1e-6).weight_decay(0.1).maximize(true));
                             },
                             true),
                         {0.23185720350649863, -0.44949391337537842, 0.97538887782376948, 1.2014385584677409});
  CHECK(AdamaxOptions().lr() == 2e-3);
  REQUIRE_THROWS_WITH(Adamax({}, AdamaxOptions(-1.0)), Catch::Contains("Adamax: invalid learning rate"));
  REQUIRE_THROWS_WITH(Adamax({}, AdamaxOptions().betas({0.9, 1.0})),
                      Catch::Contains("Adamax: invalid beta parameter at index 1"));
}

TEST_CASE("NAdam matches PyTorch over 60 steps", "[optim]") {
  require_after_60_steps(run([](auto p) { return std::make_unique<NAdam>(p); }, false),
                         {0.89187753960008254, -1.8891437558423039, 0.60958133565719963, 2.8887489948094656});
  require_after_60_steps(
      run(
          [](auto p) {
            return std::make_unique<NAdam>(
                p, NAdamOptions(0.05).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.1).momentum_decay(1e-2));
          },
          false),
      {0.2321347254906366, -0.18337274049622029, 0.97516208639705293, 0.77098169391938731});
  CHECK(NAdamOptions().momentum_decay() == 4e-3);
  REQUIRE_THROWS_WITH(NAdam({}, NAdamOptions().momentum_decay(-1)), Catch::Contains("NAdam: invalid momentum_decay"));
  REQUIRE_THROWS_WITH(NAdam({}, NAdamOptions().eps(-1)), Catch::Contains("NAdam: invalid epsilon"));
}

TEST_CASE("RAdam matches PyTorch over 60 steps, both sides of the rectification", "[optim]") {
  // With beta2 = 0.999 rho_t stays <= 5 for the first steps (SGD with momentum), then rectifies.
  require_after_60_steps(run([](auto p) { return std::make_unique<RAdam>(p); }, false),
                         {0.9815187623310162, -1.900793806711722, 0.5129222572744887, 2.8053322503481652});
  require_after_60_steps(
      run(
          [](auto p) {
            return std::make_unique<RAdam>(p, RAdamOptions(0.05).betas({0.8, 0.9}).eps(1e-6).weight_decay(0.1));
          },
          false),
      {0.23047346627321777, -0.16743243258007809, 0.97419802606479355, 0.028609336171102555});
  REQUIRE_THROWS_WITH(RAdam({}, RAdamOptions().weight_decay(-1)), Catch::Contains("RAdam: invalid weight_decay"));
}

TEST_CASE("Rprop matches PyTorch over 60 steps", "[optim]") {
  require_after_60_steps(run([](auto p) { return std::make_unique<Rprop>(p); }, false),
                         {0.24284204206473875, -0.16591579181365504, 1.0000003969868019, -1.5128342955356537e-05});
  require_after_60_steps(run(
                             [](auto p) {
                               return std::make_unique<Rprop>(
                                   p, RpropOptions(0.05).etas({0.3, 1.5}).step_sizes({1e-3, 0.2}).maximize(true));
                             },
                             true),
                         {0.24273076562499996, -0.16440949449848041, 1.0004207563867182, 0.00085504218749996898});
  REQUIRE_THROWS_WITH(Rprop({}, RpropOptions().etas({0.5, 1.0})), Catch::Contains("Rprop: invalid eta values"));
  REQUIRE_THROWS_WITH(Rprop({}, RpropOptions(-0.1)), Catch::Contains("Rprop: invalid learning rate"));
}

TEST_CASE("ASGD matches PyTorch over 60 steps, parameters and average", "[optim]") {
  Variable w = start();
  ASGD plain({w});
  for (int i = 0; i < 60; ++i) do_step(plain, w, false);
  const std::vector<double> want = {0.39786640271424922, -0.19574331589832167, 0.93675321683831947,
                                    0.13862876446044217};
  require_after_60_steps(to_vector<double>(w.data()), want);
  require_after_60_steps(to_vector<double>(state_named(plain, "state.0.ax")), want);  // mu is 1 until t0: ax = p

  Variable v = start();
  ASGD averaged({v}, ASGDOptions(0.05).lambd(1e-3).alpha(0.5).t0(20).weight_decay(0.1).maximize(true));
  for (int i = 0; i < 60; ++i) do_step(averaged, v, true);
  require_after_60_steps(to_vector<double>(v.data()),
                         {0.23244185122266742, -0.16319516147642094, 0.97491399308610305, 1.1709782018934699e-06});
  require_after_60_steps(to_vector<double>(state_named(averaged, "state.0.ax")),
                         {0.2407967511954805, -0.16322074396633646, 0.97413733028615213, 0.00088845286070898821});
  REQUIRE_THROWS_WITH(ASGD({}, ASGDOptions().weight_decay(-1)), Catch::Contains("ASGD: invalid weight_decay"));
}

TEST_CASE("Adamax, NAdam, RAdam, Rprop and ASGD state saved mid-run resumes identically", "[optim][checkpoint]") {
  const auto path =
      (std::filesystem::temp_directory_path() / ("ddl_optim_extra_" + std::to_string(::getpid()) + ".safetensors"))
          .string();
  const std::vector<std::pair<const char*, Make>> kinds = {
      {"Adamax", [](auto p) { return std::make_unique<Adamax>(p, AdamaxOptions(0.05)); }},
      {"NAdam", [](auto p) { return std::make_unique<NAdam>(p, NAdamOptions(0.05)); }},
      {"RAdam", [](auto p) { return std::make_unique<RAdam>(p, RAdamOptions(0.05)); }},
      {"Rprop", [](auto p) { return std::make_unique<Rprop>(p); }},
      {"ASGD", [](auto p) { return std::make_unique<ASGD>(p, ASGDOptions(0.05).t0(3)); }},
  };
  for (const auto& [name, make] : kinds) {
    INFO(name);
    const std::vector<double> straight = run(make, false, 12);
    Variable w = start();
    auto first = make({w});
    for (int i = 0; i < 5; ++i) do_step(*first, w, false);
    save_optimizer(*first, path);
    Variable resumed(w.data().clone(), true);
    auto second = make({resumed});
    load_optimizer(*second, path);
    for (int i = 0; i < 7; ++i) do_step(*second, resumed, false);
    REQUIRE(to_vector<double>(resumed.data()) == straight);
  }
  std::filesystem::remove(path);
}
