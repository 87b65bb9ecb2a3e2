// Loss modules for the margin, embedding and likelihood losses (autograd/ops/margin_loss.h), as
// torch.nn's: MarginRankingLoss, HingeEmbeddingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss,
// MultiMarginLoss, MultiLabelMarginLoss, CosineEmbeddingLoss, TripletMarginLoss, PoissonNLLLoss,
// GaussianNLLLoss, and CTCLoss (autograd/ops/ctc_loss.h). Each holds its options; class weights are
// buffers, as in PyTorch.
#pragma once

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

class MarginRankingLoss : public Cloneable<MarginRankingLoss> {
 public:
  explicit MarginRankingLoss(double margin = 0, Reduction reduction = Reduction::Mean)
      : Cloneable("MarginRankingLoss"), margin_(margin), reduction_(reduction) {}
  void reset() override {}
  Variable forward(const Variable& x1, const Variable& x2, const Variable& y) const {
    return margin_ranking_loss(x1, x2, y, margin_, reduction_);
  }
  Variable operator()(const Variable& x1, const Variable& x2, const Variable& y) const { return forward(x1, x2, y); }

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  double margin_;
  Reduction reduction_;
};

class HingeEmbeddingLoss : public Cloneable<HingeEmbeddingLoss> {
 public:
  explicit HingeEmbeddingLoss(double margin = 1.0, Reduction reduction = Reduction::Mean)
      : Cloneable("HingeEmbeddingLoss"), margin_(margin), reduction_(reduction) {}
  void reset() override {}
  Variable forward(const Variable& x, const Tensor& y) const { return hinge_embedding_loss(x, y, margin_, reduction_); }
  Variable operator()(const Variable& x, const Tensor& y) const { return forward(x, y); }

 private:
  using Module::forward;
  double margin_;
  Reduction reduction_;
};

class SoftMarginLoss : public Cloneable<SoftMarginLoss> {
 public:
  explicit SoftMarginLoss(Reduction reduction = Reduction::Mean) : Cloneable("SoftMarginLoss"), reduction_(reduction) {}
  void reset() override {}
  Variable forward(const Variable& x, const Tensor& y) const { return soft_margin_loss(x, y, reduction_); }
  Variable operator()(const Variable& x, const Tensor& y) const { return forward(x, y); }

 private:
  using Module::forward;
  Reduction reduction_;
};

// weight: undefined, or broadcastable to the input (typically [C]).
class MultiLabelSoftMarginLoss : public Module {
 public:
  explicit MultiLabelSoftMarginLoss(Tensor weight = {}, Reduction reduction = Reduction::Mean);
  Variable forward(const Variable& x, const Variable& y) const;
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }
  std::shared_ptr<Module> clone() const override;

 private:
  using Module::forward;
  Variable weight_;
  Reduction reduction_;
};

// LibTorch's options: MultiMarginLoss(MultiMarginLossOptions().p(2).margin(0.5)).
struct MultiMarginLossOptions {
  DDL_ARG(int64_t, p) = 1;  // 1 or 2
  DDL_ARG(double, margin) = 1.0;
  DDL_ARG(Tensor, weight) = {};  // undefined, or [C]
  DDL_ARG(Reduction, reduction) = Reduction::Mean;
};

// weight: undefined, or [C].
class MultiMarginLoss : public Module {
 public:
  explicit MultiMarginLoss(MultiMarginLossOptions opts = {});
  MultiMarginLoss(MultiMarginLossOptions opts, Tensor weight) : MultiMarginLoss(opts.weight(std::move(weight))) {}
  Variable forward(const Variable& x, const Tensor& y) const;
  Variable operator()(const Variable& x, const Tensor& y) const { return forward(x, y); }
  std::shared_ptr<Module> clone() const override;

 private:
  using Module::forward;
  MultiMarginLossOptions opts_;
  Variable weight_;
};

class MultiLabelMarginLoss : public Cloneable<MultiLabelMarginLoss> {
 public:
  explicit MultiLabelMarginLoss(Reduction reduction = Reduction::Mean)
      : Cloneable("MultiLabelMarginLoss"), reduction_(reduction) {}
  void reset() override {}
  Variable forward(const Variable& x, const Tensor& y) const { return multilabel_margin_loss(x, y, reduction_); }
  Variable operator()(const Variable& x, const Tensor& y) const { return forward(x, y); }

 private:
  using Module::forward;
  Reduction reduction_;
};

class CosineEmbeddingLoss : public Cloneable<CosineEmbeddingLoss> {
 public:
  explicit CosineEmbeddingLoss(double margin = 0, Reduction reduction = Reduction::Mean)
      : Cloneable("CosineEmbeddingLoss"), margin_(margin), reduction_(reduction) {}
  void reset() override {}
  Variable forward(const Variable& x1, const Variable& x2, const Tensor& y) const {
    return cosine_embedding_loss(x1, x2, y, margin_, reduction_);
  }
  Variable operator()(const Variable& x1, const Variable& x2, const Tensor& y) const { return forward(x1, x2, y); }

 private:
  using Module::forward;
  double margin_;
  Reduction reduction_;
};

struct TripletMarginLossOptions {
  DDL_ARG(double, margin) = 1.0;
  DDL_ARG(double, p) = 2;
  DDL_ARG(double, eps) = 1e-6;
  DDL_ARG(bool, swap) = false;
  DDL_ARG(Reduction, reduction) = Reduction::Mean;
};

class TripletMarginLoss : public Cloneable<TripletMarginLoss> {
 public:
  explicit TripletMarginLoss(TripletMarginLossOptions opts = {}) : Cloneable("TripletMarginLoss"), opts_(opts) {}
  void reset() override {}
  Variable forward(const Variable& a, const Variable& p, const Variable& n) const {
    return triplet_margin_loss(a, p, n, opts_.margin(), opts_.p(), opts_.eps(), opts_.swap(), opts_.reduction());
  }
  Variable operator()(const Variable& a, const Variable& p, const Variable& n) const { return forward(a, p, n); }

 private:
  using Module::forward;
  TripletMarginLossOptions opts_;
};

struct PoissonNLLLossOptions {
  DDL_ARG(bool, log_input) = true;
  DDL_ARG(bool, full) = false;
  DDL_ARG(double, eps) = 1e-8;
  DDL_ARG(Reduction, reduction) = Reduction::Mean;
};

class PoissonNLLLoss : public Cloneable<PoissonNLLLoss> {
 public:
  explicit PoissonNLLLoss(PoissonNLLLossOptions opts = {}) : Cloneable("PoissonNLLLoss"), opts_(opts) {}
  void reset() override {}
  Variable forward(const Variable& x, const Variable& y) const {
    return poisson_nll_loss(x, y, opts_.log_input(), opts_.full(), opts_.eps(), opts_.reduction());
  }
  Variable operator()(const Variable& x, const Variable& y) const { return forward(x, y); }

 private:
  using Module::forward;
  PoissonNLLLossOptions opts_;
};

struct GaussianNLLLossOptions {
  DDL_ARG(bool, full) = false;
  DDL_ARG(double, eps) = 1e-6;
  DDL_ARG(Reduction, reduction) = Reduction::Mean;
};

class GaussianNLLLoss : public Cloneable<GaussianNLLLoss> {
 public:
  explicit GaussianNLLLoss(GaussianNLLLossOptions opts = {}) : Cloneable("GaussianNLLLoss"), opts_(opts) {}
  void reset() override {}
  Variable forward(const Variable& x, const Variable& y, const Variable& var) const {
    return gaussian_nll_loss(x, y, var, opts_.full(), opts_.eps(), opts_.reduction());
  }
  Variable operator()(const Variable& x, const Variable& y, const Variable& var) const { return forward(x, y, var); }

 private:
  using Module::forward;
  GaussianNLLLossOptions opts_;
};

struct CTCLossOptions {
  DDL_ARG(int64_t, blank) = 0;
  DDL_ARG(Reduction, reduction) = Reduction::Mean;
  DDL_ARG(bool, zero_infinity) = false;
};

class CTCLoss : public Cloneable<CTCLoss> {
 public:
  explicit CTCLoss(CTCLossOptions opts = {}) : Cloneable("CTCLoss"), opts_(opts) {}
  void reset() override {}
  Variable forward(const Variable& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                   const std::vector<int64_t>& target_lengths) const {
    return ctc_loss(log_probs, targets, input_lengths, target_lengths, opts_.blank(), opts_.reduction(),
                    opts_.zero_infinity());
  }
  Variable operator()(const Variable& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                      const std::vector<int64_t>& target_lengths) const {
    return forward(log_probs, targets, input_lengths, target_lengths);
  }

 private:
  using Module::forward;
  CTCLossOptions opts_;
};

}  // namespace ddl::nn
