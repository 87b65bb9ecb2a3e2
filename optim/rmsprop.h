// RMSprop (Hinton, Coursera "Neural Networks for Machine Learning", lecture 6e),
// with PyTorch's options and update:
//   s = alpha s + (1 - alpha) g^2;  centered: m = alpha m + (1 - alpha) g, s' = s - m^2
//   momentum > 0: b = momentum b + g / (sqrt(s') + eps), p -= lr b;  else p -= lr g / (sqrt(s') + eps)
// weight_decay adds weight_decay * p to g first (L2, not decoupled).
#pragma once

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

// LibTorch's options: RMSprop(params, RMSpropOptions(1e-2).alpha(0.9).centered(true)).
struct RMSpropOptions {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr) = 1e-2;
  DDL_ARG(double, alpha) = 0.99;
  DDL_ARG(double, eps) = 1e-8;
  DDL_ARG(double, weight_decay) = 0;
  DDL_ARG(double, momentum) = 0;
  DDL_ARG(bool, centered) = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Variable> params, RMSpropOptions opts = {});
  void step() override;
};

}  // namespace ddl::optim
