// Subset, random_split and ConcatDataset.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <ddl/data/dataset_ops.h>
#include <ddl/tensor/core/random.h>

namespace ddl::data {

Subset::Subset(std::shared_ptr<const Dataset> source, std::vector<int64_t> indices, Transform transform)
    : Dataset(std::move(transform)), source_(std::move(source)), indices_(std::move(indices)) {
  DDL_CHECK(source_ != nullptr, "Subset: source dataset is null");
  const int64_t n = source_->size();
  for (size_t i = 0; i < indices_.size(); ++i)
    DDL_CHECK(indices_[i] >= 0 && indices_[i] < n, "Subset: index ", indices_[i], " (entry ", i,
              ") is out of range for a source of ", n, " examples");
}

Example Subset::load(int64_t index) const { return source_->get(indices_[static_cast<size_t>(index)]); }

Example Subset::load_in_context(int64_t index, TransformContext& ctx) const {
  return source_->get(indices_[static_cast<size_t>(index)], ctx);
}

std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> source,
                                                  const std::vector<int64_t>& lengths, uint64_t seed) {
  DDL_CHECK(source != nullptr, "random_split: source dataset is null");
  int64_t total = 0;
  for (int64_t len : lengths) {
    DDL_CHECK(len >= 0, "random_split: lengths must be non-negative, got ", len);
    total += len;
  }
  DDL_CHECK(total == source->size(), "random_split: lengths sum to ", total, " but the dataset has ", source->size(),
            " examples");
  Generator gen(seed);
  const Tensor perm = randperm(total, gen);
  const int64_t* p = perm.data<int64_t>();
  std::vector<std::shared_ptr<Subset>> out;
  int64_t at = 0;
  for (int64_t len : lengths) {
    out.push_back(std::make_shared<Subset>(source, std::vector<int64_t>(p + at, p + at + len)));
    at += len;
  }
  return out;
}

std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> source,
                                                  const std::vector<double>& fractions, uint64_t seed) {
  DDL_CHECK(source != nullptr, "random_split: source dataset is null");
  double sum = 0;
  for (double f : fractions) {
    DDL_CHECK(f >= 0 && f <= 1, "random_split: fractions must lie in [0, 1], got ", f);
    sum += f;
  }
  DDL_CHECK(std::abs(sum - 1) < 1e-9, "random_split: fractions sum to ", sum, ", not 1");
  const int64_t n = source->size();
  std::vector<int64_t> lengths;
  int64_t given = 0;
  for (double f : fractions) {
    lengths.push_back(static_cast<int64_t>(std::floor(static_cast<double>(n) * f)));
    given += lengths.back();
  }
  for (int64_t i = 0; given < n; ++i, ++given) lengths[static_cast<size_t>(i) % lengths.size()] += 1;
  return random_split(std::move(source), lengths, seed);
}

ConcatDataset::ConcatDataset(std::vector<std::shared_ptr<const Dataset>> datasets) : datasets_(std::move(datasets)) {
  DDL_CHECK(!datasets_.empty(), "ConcatDataset: needs at least one dataset");
  offsets_.push_back(0);
  for (size_t i = 0; i < datasets_.size(); ++i) {
    DDL_CHECK(datasets_[i] != nullptr, "ConcatDataset: dataset ", i, " is null");
    offsets_.push_back(offsets_.back() + datasets_[i]->size());
  }
}

std::pair<size_t, int64_t> ConcatDataset::locate(int64_t index) const {
  DDL_CHECK(index >= 0 && index < size(), "ConcatDataset: index ", index, " out of range for ", size(), " examples");
  const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), index);
  const size_t d = static_cast<size_t>(it - offsets_.begin()) - 1;
  return {d, index - offsets_[d]};
}

Example ConcatDataset::load(int64_t index) const {
  const auto [d, i] = locate(index);
  return datasets_[d]->get(i);
}

Example ConcatDataset::load_in_context(int64_t index, TransformContext& ctx) const {
  const auto [d, i] = locate(index);
  return datasets_[d]->get(i, ctx);
}

}  // namespace ddl::data
