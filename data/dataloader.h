// DataLoader: turns a Dataset and a Sampler into an epoch of batches, each a
// contiguous data tensor [B, ...] and a target tensor [B, ...]. With
// num_workers > 0, threads prefetch whole batches into a bounded window; the
// consumer still receives them strictly in order, so an epoch's batches are
// the same for any num_workers (see Note [Loader pipeline]).
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <vector>

#include <ddl/data/dataset.h>
#include <ddl/data/sampler.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::data {

struct Batch {
  Tensor data;    // [B, ...] contiguous, the examples' dtype
  Tensor target;  // [B, ...], e.g. int64 [B] for class indices
};

// LibTorch's options and names (DataLoaderOptions(64).workers(2).drop_last(true)), with
// Python's shuffle, sampler, prefetch_factor, pin_memory and collate_fn.
struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(int64_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(int64_t, batch_size) = 1;
  DDL_ARG(bool, shuffle) = false;                   // RandomSampler(seed) when no sampler is given
  DDL_ARG(std::shared_ptr<Sampler>, sampler) = {};  // overrides shuffle; e.g. a DistributedSampler
  DDL_ARG(bool, drop_last) = false;                 // drop a last batch smaller than batch_size
  DDL_ARG(int64_t, workers) = 0;                    // worker threads (Python's num_workers); 0: the calling thread
  DDL_ARG(int64_t, prefetch_factor) = 2;            // batches in flight per worker
  // Workers copy each batch into page-locked memory (Tensor::pin_memory), so a
  // later .to(Device::cuda()) is an asynchronous DMA. Ignored without a GPU (as
  // in PyTorch), so one configuration runs everywhere.
  DDL_ARG(bool, pin_memory) = false;
  DDL_ARG(uint64_t, seed) = 0;  // seeds shuffling and random transforms
  // Turns a batch's examples into a Batch (torch's collate_fn), e.g. to pad sequences of
  // different lengths; runs in the loader's worker threads, so it must be thread-safe.
  // Empty: collate() below.
  DDL_ARG(std::function<Batch(const std::vector<Example>&)>, collate_fn) = {};
};

// Stacks examples (same data shape and dtype, same target shape and dtype) into a Batch.
// Throws ddl::Error naming the first example that differs.
Batch collate(const std::vector<Example>& examples);

class DataLoader {
 public:
  // Requires a dataset, batch_size >= 1, num_workers >= 0, prefetch_factor >= 1.
  DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {});

  // Selects the epoch for shuffling and augmentation. The epoch lives in the
  // sampler, so calling sampler->set_epoch(e) instead (PyTorch's habit) works too.
  void set_epoch(int64_t epoch) { sampler_->set_epoch(epoch); }
  int64_t epoch() const { return sampler_->epoch(); }
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }
  // Batches per epoch.
  int64_t size() const;
  const Dataset& dataset() const { return *dataset_; }
  const DataLoaderOptions& options() const { return options_; }

  class Epoch;  // one pass: the batch list, the workers and their queue
  // An input iterator over one epoch. Workers stop and are joined when the
  // last copy of the iterator dies (leaving a range-for early is safe).
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = const Batch*;
    using reference = const Batch&;

    Iterator() = default;
    const Batch& operator*() const { return current_; }
    const Batch* operator->() const { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return done() == other.done(); }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<Epoch> epoch);
    bool done() const { return epoch_ == nullptr; }
    std::shared_ptr<Epoch> epoch_;
    Batch current_;
  };

  // Starts an epoch (the workers, when there are any) and loads its first batch.
  // A worker's exception is rethrown here or in operator++, as a ddl::Error
  // carrying its message and the batch and example it failed on.
  Iterator begin() const;
  Iterator end() const { return Iterator(); }

 private:
  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<Sampler> sampler_;
};

}  // namespace ddl::data
