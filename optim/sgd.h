// SGD with momentum, dampening, weight decay and Nesterov, exactly PyTorch's rule:
//   d = g + wd * p;  b = d (first step) or momentum * b + (1 - dampening) * d;
//   d = nesterov ? d + momentum * b : b;  p -= lr * d
#pragma once

#include <ddl/optim/optimizer.h>

namespace ddl::optim {

struct SGDOptions {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Variable> params, SGDOptions opts);
  void step() override;
};

}  // namespace ddl::optim
