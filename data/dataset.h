// The Dataset interface and TensorDataset. A dataset is a random-access list of
// examples (data tensor, target tensor); get() may be called from several
// loader threads at once, so implementations keep no mutable state. The
// dataset's transform runs inside get() with the caller's TransformContext.
#pragma once

#include <cstdint>

#include <ddl/data/transforms.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::data {

struct Example {
  Tensor data;    // e.g. an image [C, H, W]
  Tensor target;  // e.g. a 0-dim int64 class index
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Example `index` (0 <= index < size()) with the transform applied, random
  // draws taken from `ctx`. Thread-safe. The data may share memory with the
  // dataset: treat it as read-only.
  Example get(int64_t index, TransformContext& ctx) const;
  // Same, with the context of seed 0, epoch 0.
  Example get(int64_t index) const;

  const Transform& transform() const { return transform_; }
  void set_transform(Transform transform) { transform_ = std::move(transform); }

 protected:
  explicit Dataset(Transform transform = {}) : transform_(std::move(transform)) {}
  // The untransformed example; index is already range-checked.
  virtual Example load(int64_t index) const = 0;
  // Same, for datasets built on others (Subset, ConcatDataset) whose sources' transforms
  // need the caller's random context; others keep this default.
  virtual Example load_in_context(int64_t index, TransformContext& /*ctx*/) const { return load(index); }

 private:
  Transform transform_;
};

// Rows of `data` paired with entries of `targets` (same first extent).
class TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor data, Tensor targets, Transform transform = {});
  int64_t size() const override { return data_.size(0); }
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 protected:
  Example load(int64_t index) const override;

 private:
  Tensor data_, targets_;
};

}  // namespace ddl::data
