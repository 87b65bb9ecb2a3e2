// Adagrad (Duchi, Hazan & Singer, JMLR 2011), with PyTorch's options and update:
//   clr = lr / (1 + (t - 1) lr_decay);  s += g^2;  p -= clr g / (sqrt(s) + eps)
// weight_decay adds weight_decay * p to g first; s starts at initial_accumulator_value.
#pragma once

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

// LibTorch's options: Adagrad(params, AdagradOptions(0.1).lr_decay(0.5)).
struct AdagradOptions {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr) = 1e-2;
  DDL_ARG(double, lr_decay) = 0;
  DDL_ARG(double, weight_decay) = 0;
  DDL_ARG(double, initial_accumulator_value) = 0;
  DDL_ARG(double, eps) = 1e-10;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Variable> params, AdagradOptions opts = {});
  void step() override;
};

}  // namespace ddl::optim
