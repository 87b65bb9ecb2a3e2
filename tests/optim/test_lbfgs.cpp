// L-BFGS, with and without the strong-Wolfe line search, against torch.optim.LBFGS 1.13: parameters, the losses step()
// returns and the number of closure evaluations over five steps on Rosenbrock's function (tests/golden/optim_lbfgs.py).
#include <catch2/catch.hpp>

#include "tests/common/error_of.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::optim;

namespace {

struct Run {
  double x, y;
  int evals;
  std::vector<double> losses;
};

Run run(const LBFGSOptions& o) {
  Variable x(from_vector<double>({-1.5}), true), y(from_vector<double>({2.0}), true);
  LBFGS opt({x, y}, o);
  int evals = 0;
  auto closure = [&] {
    ++evals;
    opt.zero_grad();
    const Variable r = y - x * x;
    Variable loss = sum((1.0 - x) * (1.0 - x) + 100.0 * (r * r));
    loss.backward();
    return loss.data().item();
  };
  std::vector<double> losses;
  for (int i = 0; i < 5; ++i) losses.push_back(opt.step(closure));
  return {x.data().item(), y.data().item(), evals, losses};
}

void require_run(const Run& got, double x, double y, int evals, const std::vector<double>& losses, double rtol = 1e-9) {
  REQUIRE(got.evals == evals);
  REQUIRE(got.x == Approx(x).epsilon(rtol));
  REQUIRE(got.y == Approx(y).epsilon(rtol));
  // Near the minimum the loss is a difference of nearly equal terms: compare it to 1e-12 absolute there.
  for (size_t i = 0; i < losses.size(); ++i) REQUIRE(got.losses[i] == Approx(losses[i]).epsilon(rtol).margin(1e-12));
}

}  // namespace

TEST_CASE("LBFGS matches torch.optim.LBFGS on Rosenbrock's function", "[optim][lbfgs]") {
  require_run(run({.lr = 0.1}), -0.6527175690138125, 0.45849757189767293, 100,
              {12.5, 5.8160394788065428, 11.47294337022605, 3.4358507544591541, 3.1792715556416766});
  require_run(run({.lr = 0.2, .max_iter = 7, .history_size = 3}), -0.62465826778604283, 0.36024893355116061, 35,
              {12.5, 6.1819378522411474, 5.8648800293576526, 5.8266121606600914, 4.7346091524829248});
  require_run(run({.lr = 0.1, .max_iter = 20, .max_eval = 5}), -1.4043758711403123, 1.9909841899017009, 25,
              {12.5, 5.871813679613652, 5.8629532525005885, 5.8534599013416546, 5.8398915856575737});
}

TEST_CASE("LBFGS with the strong-Wolfe line search matches PyTorch", "[optim][lbfgs]") {
  require_run(run({.lr = 1, .strong_wolfe = true}), 0.99999799431963976, 0.99999734389216366, 55,
              {12.5, 1.3070983150500495, 1.8840481378377831e-07, 1.8769270132829514e-10, 1.8769270132829514e-10});
  // This run amplifies rounding: in PyTorch itself, x0 moved by 1e-15 changes the last loss by 3e-9 relative.
  require_run(run({.lr = 0.5, .max_iter = 10, .history_size = 2, .strong_wolfe = true}), 0.99448425587081268,
              0.98890111967791872, 60,
              {12.5, 4.5383250152663921, 1.5018383595904266, 0.32082686756350975, 0.039172637223590732}, 1e-7);
}

TEST_CASE("LBFGS needs a closure and one group", "[optim][lbfgs]") {
  Variable w(from_vector<double>({1}), true);
  LBFGS opt({w});
  REQUIRE_THAT(test::error_of([&] { opt.step(); }), Catch::Contains("LBFGS: step needs a closure"));
  opt.add_param_group({Variable(from_vector<double>({1}), true)});
  REQUIRE_THAT(test::error_of([&] { opt.step([] { return 0.0; }); }), Catch::Contains("one parameter group"));
}
