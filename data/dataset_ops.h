// Datasets made from other datasets, as torch.utils.data's: Subset (chosen indices),
// random_split (disjoint random subsets of given lengths or fractions) and ConcatDataset
// (several datasets one after another). They hold their sources by shared_ptr and copy
// no data; a source's own transform still runs, with the caller's random context.
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include <ddl/data/dataset.h>

namespace ddl::data {

class Subset : public Dataset {
 public:
  // Requires every index to lie in [0, source->size()).
  Subset(std::shared_ptr<const Dataset> source, std::vector<int64_t> indices, Transform transform = {});
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  const std::vector<int64_t>& indices() const { return indices_; }
  const Dataset& source() const { return *source_; }

 protected:
  Example load(int64_t index) const override;
  Example load_in_context(int64_t index, TransformContext& ctx) const override;

 private:
  std::shared_ptr<const Dataset> source_;
  std::vector<int64_t> indices_;
};

// Disjoint subsets of `lengths` examples (summing to source->size()), drawn from a
// permutation of Generator(seed): the same seed gives the same split on every rank.
std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> source,
                                                  const std::vector<int64_t>& lengths, uint64_t seed = 0);
// Fractions summing to 1, rounded down with the remainder dealt one at a time to the
// first subsets (PyTorch 1.13's rule).
std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> source,
                                                  const std::vector<double>& fractions, uint64_t seed = 0);
// Braced lists pick by their element type: random_split(d, {800, 200}) or ({0.8, 0.2}).
inline std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> source,
                                                         std::initializer_list<int> lengths, uint64_t seed = 0) {
  return random_split(std::move(source), std::vector<int64_t>(lengths.begin(), lengths.end()), seed);
}
inline std::vector<std::shared_ptr<Subset>> random_split(std::shared_ptr<const Dataset> source,
                                                         std::initializer_list<double> fractions, uint64_t seed = 0) {
  return random_split(std::move(source), std::vector<double>(fractions), seed);
}

class ConcatDataset : public Dataset {
 public:
  // Requires at least one dataset, none null.
  explicit ConcatDataset(std::vector<std::shared_ptr<const Dataset>> datasets);
  int64_t size() const override { return offsets_.back(); }
  // Which source holds example `index`, and its index there.
  std::pair<size_t, int64_t> locate(int64_t index) const;

 protected:
  Example load(int64_t index) const override;
  Example load_in_context(int64_t index, TransformContext& ctx) const override;

 private:
  std::vector<std::shared_ptr<const Dataset>> datasets_;
  std::vector<int64_t> offsets_;  // offsets_[i]: examples in datasets_[0 .. i)
};

}  // namespace ddl::data
