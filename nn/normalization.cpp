// LayerNorm and GroupNorm: construction, forward, printing. The math is in
// autograd/ops/layer_norm.cpp.
#include <sstream>

#include <ddl/nn/normalization.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::nn {

LayerNorm::LayerNorm(Shape normalized_shape, double eps, bool elementwise_affine)
    : Cloneable("LayerNorm"), normalized_shape_(std::move(normalized_shape)), eps_(eps), affine_(elementwise_affine) {
  DDL_CHECK(normalized_shape_.size() >= 1 && normalized_shape_.numel() > 0,
            "LayerNorm: normalized_shape must be non-empty with positive extents, got ", normalized_shape_);
  reset();
}

void LayerNorm::reset() {
  if (!affine_) return;
  weight = register_parameter("weight", ones(normalized_shape_));
  bias = register_parameter("bias", zeros(normalized_shape_));
}

Variable LayerNorm::forward(const Variable& x) { return layer_norm(x, normalized_shape_, weight, bias, eps_); }

std::string LayerNorm::extra_repr() const {
  std::ostringstream os;
  os << '(';
  // A Python tuple: (8,) or (4, 5).
  for (int64_t i = 0; i < normalized_shape_.size(); ++i) os << (i ? ", " : "") << normalized_shape_[i];
  if (normalized_shape_.size() == 1) os << ',';
  os << "), eps=" << eps_ << ", elementwise_affine=" << (affine_ ? "True" : "False");
  return os.str();
}

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : Cloneable("GroupNorm"), num_groups_(num_groups), num_channels_(num_channels), eps_(eps), affine_(affine) {
  DDL_CHECK(num_groups > 0 && num_channels > 0 && num_channels % num_groups == 0, "GroupNorm: num_groups=", num_groups,
            " must be positive and divide num_channels=", num_channels);
  reset();
}

void GroupNorm::reset() {
  if (!affine_) return;
  weight = register_parameter("weight", ones({num_channels_}));
  bias = register_parameter("bias", zeros({num_channels_}));
}

Variable GroupNorm::forward(const Variable& x) {
  DDL_CHECK(x.dim() >= 2 && x.size(1) == num_channels_, "GroupNorm: expected [N, ", num_channels_, ", *], got ",
            x.shape());
  return group_norm(x, num_groups_, weight, bias, eps_);
}

std::string GroupNorm::extra_repr() const {
  std::ostringstream os;
  os << num_groups_ << ", " << num_channels_ << ", eps=" << eps_ << ", affine=" << (affine_ ? "True" : "False");
  return os.str();
}

}  // namespace ddl::nn
