// Samplers decide which dataset indices an epoch visits and in what order:
// SequentialSampler, RandomSampler (seeded), WeightedRandomSampler and DistributedSampler, which
// splits every epoch across the ranks of a data-parallel job exactly as
// PyTorch's torch.utils.data.DistributedSampler does, shuffled order included
// (see Note [Distributed partition]). BatchSampler groups another sampler's indices into batches.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace ddl::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices of the current epoch, in visiting order. Deterministic for a given epoch.
  virtual std::vector<int64_t> indices() const = 0;
  // How many indices indices() returns.
  virtual int64_t size() const = 0;
  // Selects the epoch; shuffling samplers draw a new order for each epoch.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

 protected:
  int64_t epoch_ = 0;
};

// 0, 1, ..., n - 1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
};

// A permutation of 0 .. n - 1 drawn from Generator(seed + epoch) (ddl's randperm).
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t n, uint64_t seed = 0);
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
  uint64_t seed_;
};

// num_samples indices drawn with probabilities proportional to `weights` (torch.utils.data.
// WeightedRandomSampler), from Generator(seed + epoch). With replacement each draw is independent;
// without, each index appears at most once, drawn as successive draws from the weights left (the
// exponential-key method: the smallest keys -log(u) / w), and zero-weight indices come last, in index
// order, as PyTorch 1.13 lets them be drawn once the others run out. Requires a 1-d list of finite
// weights >= 0 with a positive sum, num_samples >= 1, and without replacement num_samples <=
// weights.size(). Draws differ from PyTorch's for the same seed (another generator); the
// distribution is the same.
class WeightedRandomSampler : public Sampler {
 public:
  WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement = true, uint64_t seed = 0);
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return num_samples_; }

 private:
  std::vector<double> weights_;
  int64_t num_samples_;
  bool replacement_;
  uint64_t seed_;
};

// torch.randperm(n, generator=g) for a CPU torch.Generator g after g.manual_seed(seed), element for element:
// PyTorch's generator is a 32-bit MT19937 (std::mt19937's, seeded with the seed's low 32 bits). Not ddl's
// randperm, whose Generator is another stream. Requires n >= 0.
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed);

// Note [Distributed partition]
// With N examples and R ranks, one epoch is built the same way on every rank:
//   1. order = shuffle ? torch_randperm(N, seed + epoch) : 0, 1, ..., N - 1
//   2. without drop_last: extend order by wrapping around to its start until its
//      length is total = R * ceil(N / R) (the first few examples appear twice);
//      with drop_last: cut it to total = R * floor(N / R)
//   3. rank r takes order[r], order[r + R], order[r + 2R], ...
// e.g. N = 10, R = 4, no shuffle: order = 0..9 + 0 1 (total 12);
//   rank 0: 0 4 8   rank 1: 1 5 9   rank 2: 2 6 0   rank 3: 3 7 1
// so every rank gets the same number of examples (the collectives stay in step)
// and the ranks' parts are disjoint apart from the padding. All three steps are
// PyTorch's (torch/utils/data/distributed.py), so each rank's list equals
// torch.utils.data.DistributedSampler's for the same N, R, rank, seed, epoch and
// drop_last (tests/golden/sampler.py).
class DistributedSampler : public Sampler {
 public:
  // Requires num_replicas >= 1, 0 <= rank < num_replicas.
  DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false);
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return num_samples_; }  // per rank
  int64_t total_size() const { return num_samples_ * num_replicas_; }
  int64_t num_replicas() const { return num_replicas_; }
  int64_t rank() const { return rank_; }

 private:
  int64_t n_, num_replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t num_samples_;
};

// torch.utils.data.BatchSampler: the sampler's indices of an epoch in runs of batch_size, the last
// run shorter unless drop_last drops it. Not a Sampler (its items are lists); set_epoch reaches the
// wrapped sampler. The DataLoader batches a sampler's indices by the same rule.
class BatchSampler {
 public:
  // Requires a sampler and batch_size >= 1.
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last);
  std::vector<std::vector<int64_t>> batches() const;
  // The number of batches: floor(n / batch_size) with drop_last, else ceil(n / batch_size).
  int64_t size() const;
  void set_epoch(int64_t epoch) { sampler_->set_epoch(epoch); }
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }
  int64_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

}  // namespace ddl::data
