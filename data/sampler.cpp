// Sampler implementations. See Note [Distributed partition] in sampler.h.
#include <numeric>
#include <random>

#include <ddl/data/sampler.h>
#include <ddl/tensor/factory.h>
#include <ddl/tensor/random.h>

namespace ddl::data {
namespace {

std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  Generator gen(seed);
  return to_vector<int64_t>(randperm(n, gen));
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

}  // namespace

// As randperm_cpu in PyTorch 1.13's aten/src/ATen/native/TensorFactories.cpp: a forward Fisher-Yates shuffle
// drawing random() % (n - i), random() a 32-bit draw, at every n (checked against 1.13 up to n = 214,748,364).
std::vector<int64_t> torch_randperm(int64_t n, uint64_t seed) {
  DDL_CHECK(n >= 0, "torch_randperm: n must be non-negative, got ", n);
  std::mt19937 engine(static_cast<uint32_t>(seed));
  std::vector<int64_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), int64_t{0});
  for (int64_t i = 0; i + 1 < n; ++i) {
    const auto z = static_cast<int64_t>(engine() % static_cast<uint64_t>(n - i));
    std::swap(r[static_cast<size_t>(i)], r[static_cast<size_t>(z + i)]);
  }
  return r;
}

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  DDL_CHECK(n >= 0, "SequentialSampler: dataset size must be non-negative, got ", n);
}

std::vector<int64_t> SequentialSampler::indices() const { return iota(n_); }

RandomSampler::RandomSampler(int64_t n, uint64_t seed) : n_(n), seed_(seed) {
  DDL_CHECK(n >= 0, "RandomSampler: dataset size must be non-negative, got ", n);
}

std::vector<int64_t> RandomSampler::indices() const { return permutation(n_, seed_ + static_cast<uint64_t>(epoch_)); }

DistributedSampler::DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank, bool shuffle,
                                       uint64_t seed, bool drop_last)
    : n_(dataset_size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  DDL_CHECK(dataset_size >= 0, "DistributedSampler: dataset size must be non-negative, got ", dataset_size);
  DDL_CHECK(num_replicas >= 1 && rank >= 0 && rank < num_replicas, "DistributedSampler: rank ", rank,
            " is not in [0, num_replicas) for num_replicas ", num_replicas);
  // PyTorch: drop_last and an uneven split -> ceil((N - R) / R) == floor(N / R); else ceil(N / R).
  num_samples_ = drop_last ? n_ / num_replicas_ : (n_ + num_replicas_ - 1) / num_replicas_;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order = shuffle_ ? torch_randperm(n_, seed_ + static_cast<uint64_t>(epoch_)) : iota(n_);
  const int64_t total = total_size();
  if (static_cast<int64_t>(order.size()) < total) {
    DDL_CHECK(n_ > 0, "DistributedSampler: cannot pad an empty dataset");
    // Wrap around as often as needed (PyTorch repeats the list when padding exceeds it).
    for (int64_t i = n_; i < total; ++i) order.push_back(order[static_cast<size_t>(i % n_)]);
  }
  order.resize(static_cast<size_t>(total));
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(num_samples_));
  for (int64_t i = rank_; i < total; i += num_replicas_) mine.push_back(order[static_cast<size_t>(i)]);
  return mine;
}

}  // namespace ddl::data
