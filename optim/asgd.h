// ASGD, averaged stochastic gradient descent (Polyak & Juditsky, "Acceleration of Stochastic
// Approximation by Averaging", 1992), with PyTorch 1.13's options and update:
//   p *= 1 - lambd eta;  p -= eta g;  ax += mu (p - ax)  (ax = p while mu = 1)
//   eta = lr / (1 + lambd lr t)^alpha;  mu = 1 / max(1, t - t0)
// The average ax is in the state ("ax"), not written to the parameters. eta and mu are float32 0-d
// state tensors, as PyTorch's ("eta", "mu"), so the rounding matches.
#pragma once

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

struct ASGDOptions {
  ASGDOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr);
  DDL_ARG(double, lambd) = 1e-4;  // decay term
  DDL_ARG(double, alpha) = 0.75;  // power for the eta update
  DDL_ARG(double, t0) = 1e6;      // the step at which averaging starts
  DDL_ARG(double, weight_decay) = 0;
  DDL_ARG(bool, maximize) = false;
};

class ASGD : public Optimizer {
 public:
  explicit ASGD(std::vector<Variable> params, ASGDOptions opts = {});
  void step() override;
};

}  // namespace ddl::optim
