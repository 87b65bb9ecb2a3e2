// Dataset's transform plumbing and TensorDataset.
#include <ddl/data/dataset.h>

namespace ddl::data {

Example Dataset::get(int64_t index, TransformContext& ctx) const {
  const int64_t n = size();
  DDL_CHECK(index >= 0 && index < n, "Dataset::get: index ", index, " out of range for a dataset of ", n, " examples");
  Example ex = load_in_context(index, ctx);
  if (transform_) ex.data = transform_(ex.data, ctx);
  return ex;
}

Example Dataset::get(int64_t index) const {
  TransformContext ctx(0, 0, index);
  return get(index, ctx);
}

TensorDataset::TensorDataset(Tensor data, Tensor targets, Transform transform)
    : Dataset(std::move(transform)), data_(std::move(data)), targets_(std::move(targets)) {
  DDL_CHECK(data_.defined() && targets_.defined() && data_.dim() >= 1 && targets_.dim() >= 1,
            "TensorDataset: data and targets must be defined tensors with at least one dim");
  DDL_CHECK(data_.size(0) == targets_.size(0), "TensorDataset: data ", describe(data_), " and targets ",
            describe(targets_), " differ in their first dim");
}

Example TensorDataset::load(int64_t index) const { return {data_.select(0, index), targets_.select(0, index)}; }

}  // namespace ddl::data
