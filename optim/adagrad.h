// Adagrad (Duchi, Hazan & Singer, JMLR 2011), with PyTorch's options and update:
//   clr = lr / (1 + (t - 1) lr_decay);  s += g^2;  p -= clr g / (sqrt(s) + eps)
// weight_decay adds weight_decay * p to g first; s starts at initial_accumulator_value.
#pragma once

#include <ddl/optim/optimizer.h>

namespace ddl::optim {

struct AdagradOptions {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Variable> params, AdagradOptions opts = {});
  void step() override;
};

}  // namespace ddl::optim
