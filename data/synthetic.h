// SyntheticDataset: deterministic, learnable fake data for tests and
// benchmarks. Example i is a pure function of (seed, i), generated on demand:
// a uint8 tensor of `shape` that averages its class's fixed random prototype
// with fresh uniform noise, so a classifier can learn it but not trivially.
#pragma once

#include <ddl/data/dataset.h>

namespace ddl::data {

class SyntheticDataset : public Dataset {
 public:
  // Requires n >= 0, num_classes >= 1. Data: uint8 `shape` (pair with ToTensor
  // like a real image); target: 0-dim int64 in [0, num_classes).
  SyntheticDataset(int64_t n, Shape shape, int64_t num_classes, uint64_t seed = 0, Transform transform = {});
  int64_t size() const override { return n_; }
  int64_t num_classes() const { return num_classes_; }
  // The class of example i (without generating its data).
  int64_t label(int64_t index) const;

 protected:
  Example load(int64_t index) const override;

 private:
  int64_t n_;
  Shape shape_;
  int64_t num_classes_;
  uint64_t seed_;
  Tensor prototypes_;  // uint8 [num_classes, numel(shape)]
};

}  // namespace ddl::data
