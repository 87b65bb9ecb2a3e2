// Rprop (Riedmiller & Braun, "A Direct Adaptive Method for Faster Backpropagation Learning: The RPROP
// Algorithm", 1993) with PyTorch 1.13's options and update: each weight has its own step size, grown by
// etaplus while its gradient keeps its sign and shrunk by etaminus when it flips (then that gradient
// counts as 0 for this step and the next); p -= sign(g) * step_size. Full-batch training only: the
// gradient's magnitude is ignored. State: "step", "prev" (the last gradient) and "step_size".
#pragma once

#include <tuple>

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

struct RpropOptions {
  using etas_t = std::tuple<double, double>;
  using step_sizes_t = std::tuple<double, double>;
  RpropOptions(double lr = 1e-2) : lr_(lr) {}      // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr);                             // the initial step size
  DDL_ARG(etas_t, etas) = {0.5, 1.2};              // (etaminus, etaplus): 0 < etaminus < 1 < etaplus
  DDL_ARG(step_sizes_t, step_sizes) = {1e-6, 50};  // (min, max) step size
  DDL_ARG(bool, maximize) = false;
};

class Rprop : public Optimizer {
 public:
  explicit Rprop(std::vector<Variable> params, RpropOptions opts = {});
  void step() override;
};

}  // namespace ddl::optim
