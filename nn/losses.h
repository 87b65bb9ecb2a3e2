// Loss modules (autograd/ops/loss.h), as torch.nn's: NLLLoss, L1Loss, SmoothL1Loss,
// HuberLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss. CrossEntropyLoss and MSELoss are in
// nn/layers.h. Weight tensors are buffers; every loss module clones (clone()).
#pragma once

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's options: NLLLoss(NLLLossOptions().weight(w).ignore_index(1)).
struct NLLLossOptions {
  DDL_ARG(Tensor, weight) = {};           // undefined, or [C]
  DDL_ARG(int64_t, ignore_index) = -100;  // samples with this target add 0 and are not counted by Mean
  DDL_ARG(Reduction, reduction) = Reduction::Mean;
};

// input: log-probabilities [N, C] or [N, C, d1, ...] (log_softmax(x, 1)); target: int64
// class indices. weight: undefined, or [C] (Mean then divides by the targets' summed weights).
class NLLLoss : public Module {
 public:
  explicit NLLLoss(NLLLossOptions opts = {});
  explicit NLLLoss(Tensor weight, NLLLossOptions opts = {}) : NLLLoss(opts.weight(std::move(weight))) {}
  Variable forward(const Variable& log_probs, const Tensor& target) const;
  Variable operator()(const Variable& log_probs, const Tensor& target) const { return forward(log_probs, target); }
  std::shared_ptr<Module> clone() const override;

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  NLLLossOptions opts_;
  Variable weight_;
};

class L1Loss : public Cloneable<L1Loss> {
 public:
  explicit L1Loss(Reduction reduction = Reduction::Mean) : Cloneable("L1Loss"), reduction_(reduction) {}
  void reset() override {}
  Variable forward(const Variable& x, const Variable& y) const { return l1_loss(x, y, reduction_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  Reduction reduction_;
};

class SmoothL1Loss : public Cloneable<SmoothL1Loss> {
 public:
  explicit SmoothL1Loss(Reduction reduction = Reduction::Mean, double beta = 1.0)
      : Cloneable("SmoothL1Loss"), reduction_(reduction), beta_(beta) {}
  void reset() override {}
  Variable forward(const Variable& x, const Variable& y) const { return smooth_l1_loss(x, y, reduction_, beta_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  Reduction reduction_;
  double beta_;
};

class HuberLoss : public Cloneable<HuberLoss> {
 public:
  explicit HuberLoss(Reduction reduction = Reduction::Mean, double delta = 1.0)
      : Cloneable("HuberLoss"), reduction_(reduction), delta_(delta) {}
  void reset() override {}
  Variable forward(const Variable& x, const Variable& y) const { return huber_loss(x, y, reduction_, delta_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  Reduction reduction_;
  double delta_;
};

// weight: undefined, or a tensor broadcastable to the input (rescales each element).
class BCELoss : public Module {
 public:
  explicit BCELoss(Tensor weight = {}, Reduction reduction = Reduction::Mean);
  Variable forward(const Variable& x, const Variable& y) const;
  std::shared_ptr<Module> clone() const override;  // the same configuration, a copy of the weight
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  Variable weight_;
  Reduction reduction_;
};

// pos_weight: undefined, or broadcastable to the input (typically [C]).
class BCEWithLogitsLoss : public Module {
 public:
  explicit BCEWithLogitsLoss(Tensor weight = {}, Reduction reduction = Reduction::Mean, Tensor pos_weight = {});
  Variable forward(const Variable& z, const Variable& y) const;
  std::shared_ptr<Module> clone() const override;
  Variable operator()(const Variable& z, const Variable& y) const { return forward(z, y); }

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  Variable weight_, pos_weight_;
  Reduction reduction_;
};

// input: log-probabilities; target: probabilities (or log-probabilities with log_target).
class KLDivLoss : public Cloneable<KLDivLoss> {
 public:
  explicit KLDivLoss(KLDivReduction reduction = KLDivReduction::Mean, bool log_target = false)
      : Cloneable("KLDivLoss"), reduction_(reduction), log_target_(log_target) {}
  void reset() override {}
  Variable forward(const Variable& x, const Variable& y) const { return kl_div(x, y, reduction_, log_target_); }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  KLDivReduction reduction_;
  bool log_target_;
};

}  // namespace ddl::nn
