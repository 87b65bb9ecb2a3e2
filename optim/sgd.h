// SGD with momentum, dampening, weight decay and Nesterov, exactly PyTorch's rule:
//   d = g + wd * p;  b = d (first step) or momentum * b + (1 - dampening) * d;
//   d = nesterov ? d + momentum * b : b;  p -= lr * d
#pragma once

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

// LibTorch's options: SGD(params, SGDOptions(0.1).momentum(0.9)); lr has no default, as in LibTorch.
struct SGDOptions {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr);
  DDL_ARG(double, momentum) = 0;
  DDL_ARG(double, dampening) = 0;
  DDL_ARG(double, weight_decay) = 0;
  DDL_ARG(bool, nesterov) = false;
  // torch.optim.SGD's foreach=True: step the contiguous CPU float32 parameters in one pass
  // over all of them (optim/multi_tensor.cpp), bit-identical to the per-tensor step. False:
  // one sgd_update_ per parameter.
  DDL_ARG(bool, multi_tensor) = true;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Variable> params, SGDOptions opts);
  void step() override;
  void set_multi_tensor(bool on) { multi_tensor_ = on; }
  bool multi_tensor() const { return multi_tensor_; }

 private:
  static void step_param(ParamGroup& group, const Tensor& w, const Tensor& grad, State& state);
  void step_multi_tensor();  // optim/multi_tensor.cpp
  bool multi_tensor_;
};

}  // namespace ddl::optim
