// Loss modules for the elementwise losses (autograd/ops/loss.h), as torch.nn's:
// L1Loss, SmoothL1Loss, HuberLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss.
// CrossEntropyLoss and MSELoss are in nn/layers.h. Weight tensors are buffers.
#pragma once

#include "autograd/functions.h"
#include "nn/module.h"

namespace ddl::nn {

class L1Loss : public Module {
 public:
  explicit L1Loss(Reduction reduction = Reduction::Mean) : Module("L1Loss"), reduction_(reduction) {}
  Variable forward(const Variable& x, const Variable& y) const { return l1_loss(x, y, reduction_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  Reduction reduction_;
};

class SmoothL1Loss : public Module {
 public:
  explicit SmoothL1Loss(Reduction reduction = Reduction::Mean, double beta = 1.0)
      : Module("SmoothL1Loss"), reduction_(reduction), beta_(beta) {}
  Variable forward(const Variable& x, const Variable& y) const { return smooth_l1_loss(x, y, reduction_, beta_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  Reduction reduction_;
  double beta_;
};

class HuberLoss : public Module {
 public:
  explicit HuberLoss(Reduction reduction = Reduction::Mean, double delta = 1.0)
      : Module("HuberLoss"), reduction_(reduction), delta_(delta) {}
  Variable forward(const Variable& x, const Variable& y) const { return huber_loss(x, y, reduction_, delta_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  Reduction reduction_;
  double delta_;
};

// weight: undefined, or a tensor broadcastable to the input (rescales each element).
class BCELoss : public Module {
 public:
  explicit BCELoss(Tensor weight = {}, Reduction reduction = Reduction::Mean);
  Variable forward(const Variable& x, const Variable& y) const;
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  Variable weight_;
  Reduction reduction_;
};

// pos_weight: undefined, or broadcastable to the input (typically [C]).
class BCEWithLogitsLoss : public Module {
 public:
  explicit BCEWithLogitsLoss(Tensor weight = {}, Reduction reduction = Reduction::Mean, Tensor pos_weight = {});
  Variable forward(const Variable& z, const Variable& y) const;
  Variable operator()(const Variable& z, const Variable& y) const { return forward(z, y); }

 private:
  Variable weight_, pos_weight_;
  Reduction reduction_;
};

// input: log-probabilities; target: probabilities (or log-probabilities with log_target).
class KLDivLoss : public Module {
 public:
  explicit KLDivLoss(KLDivReduction reduction = KLDivReduction::Mean, bool log_target = false)
      : Module("KLDivLoss"), reduction_(reduction), log_target_(log_target) {}
  Variable forward(const Variable& x, const Variable& y) const { return kl_div(x, y, reduction_, log_target_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  KLDivReduction reduction_;
  bool log_target_;
};

}  // namespace ddl::nn
