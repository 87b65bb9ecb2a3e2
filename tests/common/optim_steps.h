// Shared by the optimizer tests: the golden problem of tests/golden/optim.py (three steps
// on loss = sum(c * w^2), c = [1, 3], w0 = [1, -2], float64), a tight value check, and
// every SGD option combination for the sgd_update_ tests (CPU and CUDA).
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <vector>

#include <ddl/ddl.h>

namespace ddl::test {

inline std::vector<double> run_quadratic(
    const std::function<std::unique_ptr<optim::Optimizer>(std::vector<Variable>)>& make, int steps = 3) {
  Variable w(from_vector<double>({1, -2}), true);
  const Variable c(from_vector<double>({1, 3}));
  auto opt = make({w});
  for (int i = 0; i < steps; ++i) {
    opt->zero_grad();
    sum(c * w * w).backward();
    opt->step();
  }
  return to_vector<double>(w.data());
}

inline void require_values(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(want[i]).epsilon(1e-12).margin(1e-14));
}

// Every combination torch.optim.SGD accepts (nesterov needs momentum and dampening 0).
inline std::vector<SgdUpdate> sgd_option_matrix() {
  std::vector<SgdUpdate> all;
  for (double momentum : {0.0, 0.9})
    for (double dampening : {0.0, 0.1})
      for (bool nesterov : {false, true})
        for (double wd : {0.0, 5e-4}) {
          if (nesterov && (momentum == 0 || dampening != 0)) continue;
          all.push_back(
              {.lr = 0.1, .momentum = momentum, .dampening = dampening, .weight_decay = wd, .nesterov = nesterov});
        }
  return all;
}

}  // namespace ddl::test
