// The weighted margin-loss modules: weights are registered buffers (they follow .to(device) and
// appear in state_dict, as in PyTorch); clone() rebuilds from the options and copies the buffers.
#include <ddl/nn/margin_losses.h>

namespace ddl::nn {

namespace {
Tensor defined_or_none(const Variable& v) { return v.defined() ? v.data() : Tensor(); }
}  // namespace

MultiLabelSoftMarginLoss::MultiLabelSoftMarginLoss(Tensor weight, Reduction reduction)
    : Module("MultiLabelSoftMarginLoss"), reduction_(reduction) {
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
}

Variable MultiLabelSoftMarginLoss::forward(const Variable& x, const Variable& y) const {
  return multilabel_soft_margin_loss(x, y, defined_or_none(weight_), reduction_);
}

std::shared_ptr<Module> MultiLabelSoftMarginLoss::clone() const {
  auto copy = std::make_shared<MultiLabelSoftMarginLoss>(defined_or_none(weight_), reduction_);
  copy->copy_state_from(*this);
  return copy;
}

MultiMarginLoss::MultiMarginLoss(MultiMarginLossOptions opts, Tensor weight) : Module("MultiMarginLoss"), opts_(opts) {
  DDL_CHECK(opts.p == 1 || opts.p == 2, "MultiMarginLoss: only p == 1 and p == 2 are supported, got ", opts.p);
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
}

Variable MultiMarginLoss::forward(const Variable& x, const Tensor& y) const {
  return multi_margin_loss(x, y, opts_.p, opts_.margin, defined_or_none(weight_), opts_.reduction);
}

std::shared_ptr<Module> MultiMarginLoss::clone() const {
  auto copy = std::make_shared<MultiMarginLoss>(opts_, defined_or_none(weight_));
  copy->copy_state_from(*this);
  return copy;
}

}  // namespace ddl::nn
