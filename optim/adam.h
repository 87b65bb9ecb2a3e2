// Adam (Kingma & Ba) and AdamW (decoupled weight decay), PyTorch's update:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  (amsgrad: v_max = max(v_max, v), used for v)
//   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// Adam adds weight_decay * p to g; AdamW multiplies p by (1 - lr * weight_decay) first.
// amsgrad: Reddi et al., "On the Convergence of Adam and Beyond", ICLR 2018.
#pragma once

#include <tuple>

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

// (beta1, beta2), LibTorch's type: betas({0.9, 0.999}).
using betas_t = std::tuple<double, double>;

// LibTorch's options: Adam(params, AdamOptions(1e-3).betas({0.9, 0.999}).weight_decay(1e-2)).
struct AdamOptions {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr) = 1e-3;
  DDL_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  DDL_ARG(double, eps) = 1e-8;
  DDL_ARG(double, weight_decay) = 0;
  DDL_ARG(bool, amsgrad) = false;
  // torch.optim.Adam's foreach=True: one pass over all contiguous CPU float32 parameters
  // (optim/multi_tensor.cpp), bit-identical to the per-tensor step. False: per tensor.
  DDL_ARG(bool, multi_tensor) = true;
};

// AdamW's defaults are torch.optim.AdamW's: weight_decay 1e-2 (Adam's is 0).
struct AdamWOptions {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr) = 1e-3;
  DDL_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  DDL_ARG(double, eps) = 1e-8;
  DDL_ARG(double, weight_decay) = 1e-2;
  DDL_ARG(bool, amsgrad) = false;
  DDL_ARG(bool, multi_tensor) = true;  // as AdamOptions'
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Variable> params, AdamOptions opts, bool decoupled_weight_decay = false);
  void step() override;
  void set_multi_tensor(bool on) { multi_tensor_ = on; }
  bool multi_tensor() const { return multi_tensor_; }

 private:
  void step_param(ParamGroup& group, const Tensor& w, Tensor g, State& state) const;
  void step_multi_tensor();  // optim/multi_tensor.cpp
  bool decoupled_;
  bool multi_tensor_;
};

class AdamW : public Adam {
 public:
  explicit AdamW(std::vector<Variable> params, AdamWOptions opts = {});
};

}  // namespace ddl::optim
