// Sampler implementations. See Note [Distributed partition] in sampler.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include <ddl/data/sampler.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/random.h>

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

WeightedRandomSampler::WeightedRandomSampler(std::vector<double> weights, int64_t num_samples, bool replacement,
                                             uint64_t seed)
    : weights_(std::move(weights)), num_samples_(num_samples), replacement_(replacement), seed_(seed) {
  DDL_CHECK(num_samples > 0,
            "WeightedRandomSampler: num_samples should be a positive integer value, but got num_samples=", num_samples);
  double total = 0;
  for (size_t i = 0; i < weights_.size(); ++i) {
    const double w = weights_[i];
    DDL_CHECK(std::isfinite(w), "WeightedRandomSampler: invalid multinomial distribution (weight ", i, " is ", w,
              "; weights must be finite)");
    DDL_CHECK(w >= 0, "WeightedRandomSampler: invalid multinomial distribution (weight ", i, " is ", w, " < 0)");
    total += w;
  }
  DDL_CHECK(total > 0, "WeightedRandomSampler: invalid multinomial distribution (sum of ", weights_.size(),
            " weights <= 0)");
  DDL_CHECK(replacement || num_samples <= static_cast<int64_t>(weights_.size()),
            "WeightedRandomSampler: cannot sample ", num_samples, " > ", weights_.size(),
            " indices without replacement");
}

std::vector<int64_t> WeightedRandomSampler::indices() const {
  Generator gen(seed_ + static_cast<uint64_t>(epoch_));
  // One uniform per draw with replacement, one per index without.
  const int64_t draws = replacement_ ? num_samples_ : static_cast<int64_t>(weights_.size());
  const auto u = to_vector<double>(rand({draws}, gen, DType::Float64));
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(num_samples_));
  if (replacement_) {
    // Inverse CDF: the first index whose cumulative weight exceeds u * total (a zero weight never does).
    std::vector<double> cdf(weights_.size());
    std::partial_sum(weights_.begin(), weights_.end(), cdf.begin());
    // u * total may round up to total: then the last index of positive weight, never a zero one.
    int64_t last = static_cast<int64_t>(weights_.size()) - 1;
    while (weights_[static_cast<size_t>(last)] == 0) --last;
    for (double x : u) {
      const auto it = std::upper_bound(cdf.begin(), cdf.end(), x * cdf.back());
      out.push_back(std::min<int64_t>(it - cdf.begin(), last));
    }
    return out;
  }
  // Efraimidis and Spirakis' keys: sorting -log(u_i) / w_i ascending is drawing without replacement.
  std::vector<double> key(weights_.size());
  for (size_t i = 0; i < key.size(); ++i)
    key[i] = weights_[i] > 0 ? -std::log1p(-u[i]) / weights_[i] : std::numeric_limits<double>::infinity();
  std::vector<int64_t> order = iota(static_cast<int64_t>(key.size()));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key[a] < key[b]; });
  order.resize(static_cast<size_t>(num_samples_));
  return order;
}

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

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  DDL_CHECK(sampler_ != nullptr, "BatchSampler: no sampler given");
  DDL_CHECK(batch_size > 0,
            "BatchSampler: batch_size should be a positive integer value, but got batch_size=", batch_size);
}

int64_t BatchSampler::size() const {
  const int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<std::vector<int64_t>> BatchSampler::batches() const {
  const std::vector<int64_t> all = sampler_->indices();
  std::vector<std::vector<int64_t>> out;
  out.reserve(static_cast<size_t>(size()));
  for (size_t begin = 0; begin < all.size(); begin += static_cast<size_t>(batch_size_)) {
    const size_t end = std::min(all.size(), begin + static_cast<size_t>(batch_size_));
    if (drop_last_ && end - begin < static_cast<size_t>(batch_size_)) break;
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(begin), all.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return out;
}

}  // namespace ddl::data
