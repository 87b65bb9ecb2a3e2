// LayerNorm and GroupNorm as modules (torch.nn.LayerNorm / GroupNorm). Neither
// keeps running statistics, so training and evaluation compute the same thing.
// BatchNorm is in layers.h.
#pragma once

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>

namespace ddl::nn {

// Normalises over the last normalized_shape.size() dims of [*, normalized_shape].
class LayerNorm : public Cloneable<LayerNorm> {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  void reset() override;
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;  // normalized_shape (ones, zeros) when elementwise_affine

 private:
  Shape normalized_shape_;
  double eps_;
  bool affine_;
};

// Normalises [N, C, *] over each of num_groups groups of C / num_groups channels.
class GroupNorm : public Cloneable<GroupNorm> {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  void reset() override;
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;  // [C] (ones, zeros) when affine

 private:
  int64_t num_groups_, num_channels_;
  double eps_;
  bool affine_;
};

}  // namespace ddl::nn
