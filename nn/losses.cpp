// The weighted loss modules: their weights are registered buffers, so they
// move with .to(device) and appear in state_dict as in PyTorch.
#include "nn/losses.h"

namespace ddl::nn {

BCELoss::BCELoss(Tensor weight, Reduction reduction) : Module("BCELoss"), reduction_(reduction) {
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
}

Variable BCELoss::forward(const Variable& x, const Variable& y) const {
  return binary_cross_entropy(x, y, weight_.defined() ? weight_.data() : Tensor(), reduction_);
}

BCEWithLogitsLoss::BCEWithLogitsLoss(Tensor weight, Reduction reduction, Tensor pos_weight)
    : Module("BCEWithLogitsLoss"), reduction_(reduction) {
  if (weight.defined()) weight_ = register_buffer("weight", std::move(weight));
  if (pos_weight.defined()) pos_weight_ = register_buffer("pos_weight", std::move(pos_weight));
}

Variable BCEWithLogitsLoss::forward(const Variable& z, const Variable& y) const {
  return binary_cross_entropy_with_logits(z, y, weight_.defined() ? weight_.data() : Tensor(),
                                          pos_weight_.defined() ? pos_weight_.data() : Tensor(), reduction_);
}

}  // namespace ddl::nn
