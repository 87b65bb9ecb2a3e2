// LayerNorm and GroupNorm as modules (torch.nn.LayerNorm / GroupNorm). Neither
// keeps running statistics, so training and evaluation compute the same thing.
// BatchNorm is in layers.h.
#pragma once

#include <utility>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's LayerNormOptions({4, 5}).elementwise_affine(false) and
// GroupNormOptions(2, 8).eps(1e-3).
struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  DDL_ARG(std::vector<int64_t>, normalized_shape);
  DDL_ARG(double, eps) = 1e-5;
  DDL_ARG(bool, elementwise_affine) = true;
};
struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  DDL_ARG(int64_t, num_groups);
  DDL_ARG(int64_t, num_channels);
  DDL_ARG(double, eps) = 1e-5;
  DDL_ARG(bool, affine) = true;
};

// Normalises over the last normalized_shape.size() dims of [*, normalized_shape].
class LayerNorm : public Cloneable<LayerNorm> {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  explicit LayerNorm(const LayerNormOptions& o)
      : LayerNorm(Shape(o.normalized_shape().begin(), o.normalized_shape().end()), o.eps(), o.elementwise_affine()) {}
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
  explicit GroupNorm(const GroupNormOptions& o) : GroupNorm(o.num_groups(), o.num_channels(), o.eps(), o.affine()) {}
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
