// train_cifar --uneven: each rank's share of an epoch without DistributedSampler's padding.
// DistributedSampler (data/sampler.h, Note [Distributed partition]) wraps its order around
// until every rank has ceil(N / R) examples, so up to R - 1 examples are seen twice an epoch
// (or, with drop_last, cuts it, so up to R - 1 are never seen). Here rank r takes order[r],
// order[r + R], ... over the order as it is: every example once, ranks holding floor or
// ceil of N / R, so their batch counts may differ; DDP then trains under a dist::Join.
#pragma once

#include <numeric>

#include <ddl/data/sampler.h>

namespace ddl::apps {

class UnevenSampler : public data::Sampler {
 public:
  UnevenSampler(int64_t n, int64_t replicas, int64_t rank, uint64_t seed)
      : n_(n), replicas_(replicas), rank_(rank), seed_(seed) {}
  std::vector<int64_t> indices() const override {
    std::vector<int64_t> order = data::torch_randperm(n_, seed_ + static_cast<uint64_t>(epoch_));  // as shuffle=true
    std::vector<int64_t> mine;
    for (int64_t i = rank_; i < n_; i += replicas_) mine.push_back(order[static_cast<size_t>(i)]);
    return mine;
  }
  int64_t size() const override { return rank_ < n_ ? (n_ - rank_ + replicas_ - 1) / replicas_ : 0; }

 private:
  int64_t n_, replicas_, rank_;
  uint64_t seed_;
};

}  // namespace ddl::apps
