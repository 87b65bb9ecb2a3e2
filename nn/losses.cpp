// The weighted loss modules: their weights are registered buffers, so they
// move with .to(device) and appear in state_dict as in PyTorch. Their clone()
// rebuilds the module from its configuration and copies the buffers' values.
#include <ddl/nn/losses.h>

namespace ddl::nn {

namespace {
Tensor defined_or_none(const Variable& v) { return v.defined() ? v.data() : Tensor(); }
}  // namespace

NLLLoss::NLLLoss(Tensor weight, NLLLossOptions opts) : Module("NLLLoss"), opts_(opts) {
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
}

Variable NLLLoss::forward(const Variable& log_probs, const Tensor& target) const {
  return nll_loss(log_probs, target, defined_or_none(weight_), opts_.reduction, opts_.ignore_index);
}

// copy_state_from gives the copy's buffers fresh storage and this module's training flag.
std::shared_ptr<Module> NLLLoss::clone() const {
  auto copy = std::make_shared<NLLLoss>(defined_or_none(weight_), opts_);
  copy->copy_state_from(*this);
  return copy;
}

BCELoss::BCELoss(Tensor weight, Reduction reduction) : Module("BCELoss"), reduction_(reduction) {
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
}

Variable BCELoss::forward(const Variable& x, const Variable& y) const {
  return binary_cross_entropy(x, y, defined_or_none(weight_), reduction_);
}

std::shared_ptr<Module> BCELoss::clone() const {
  auto copy = std::make_shared<BCELoss>(defined_or_none(weight_), reduction_);
  copy->copy_state_from(*this);
  return copy;
}

BCEWithLogitsLoss::BCEWithLogitsLoss(Tensor weight, Reduction reduction, Tensor pos_weight)
    : Module("BCEWithLogitsLoss"), reduction_(reduction) {
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
  if (pos_weight.defined()) pos_weight_ = register_buffer("pos_weight", std::move(pos_weight));
}

Variable BCEWithLogitsLoss::forward(const Variable& z, const Variable& y) const {
  return binary_cross_entropy_with_logits(z, y, defined_or_none(weight_), defined_or_none(pos_weight_), reduction_);
}

std::shared_ptr<Module> BCEWithLogitsLoss::clone() const {
  auto copy = std::make_shared<BCEWithLogitsLoss>(defined_or_none(weight_), reduction_, defined_or_none(pos_weight_));
  copy->copy_state_from(*this);
  return copy;
}

}  // namespace ddl::nn
