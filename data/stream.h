// Stream datasets: examples read in order with no index (torch.utils.data.IterableDataset), for
// sources that cannot seek (a socket, a generator, a file read once), and StreamLoader, which cuts
// a stream into batches as PyTorch's DataLoader does for one: consecutive examples, the last batch
// shorter unless drop_last. There is no sampler and no shuffling (PyTorch refuses both for a
// stream), and loading runs in the calling thread: PyTorch's workers would each replay the whole
// stream unless it shards itself, and the threaded DataLoader's order guarantee rests on indices.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>

#include <ddl/data/dataloader.h>

namespace ddl::data {

class IterableDataset {
 public:
  // One pass over the stream: next() gives examples in order, then std::nullopt for good.
  class Stream {
   public:
    virtual ~Stream() = default;
    virtual std::optional<Example> next() = 0;
  };
  virtual ~IterableDataset() = default;
  // A fresh pass for `epoch` (a dataset may shuffle a buffer by it, or ignore it).
  virtual std::unique_ptr<Stream> open(int64_t epoch) const = 0;
};

// A stream from a function: make(epoch) returns the pass's generator, called until it gives
// std::nullopt (a Python generator function's role).
class GeneratorDataset : public IterableDataset {
 public:
  using NextFn = std::function<std::optional<Example>()>;
  explicit GeneratorDataset(std::function<NextFn(int64_t epoch)> make);
  std::unique_ptr<Stream> open(int64_t epoch) const override;

 private:
  std::function<NextFn(int64_t)> make_;
};

class StreamLoader {
 public:
  // Requires a dataset and batch_size >= 1; collate_fn as DataLoaderOptions' (empty: collate()).
  StreamLoader(std::shared_ptr<const IterableDataset> dataset, int64_t batch_size, bool drop_last = false,
               std::function<Batch(const std::vector<Example>&)> collate_fn = {});
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  // An input iterator over one pass; its batches are read as it advances.
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
    friend class StreamLoader;
    Iterator(const StreamLoader* loader, std::shared_ptr<IterableDataset::Stream> stream);
    bool done() const { return stream_ == nullptr; }
    const StreamLoader* loader_ = nullptr;
    std::shared_ptr<IterableDataset::Stream> stream_;
    Batch current_;
  };

  // Opens a pass for the current epoch and reads its first batch.
  Iterator begin() const;
  Iterator end() const { return Iterator(); }

 private:
  std::shared_ptr<const IterableDataset> dataset_;
  int64_t batch_size_;
  bool drop_last_;
  std::function<Batch(const std::vector<Example>&)> collate_;
  int64_t epoch_ = 0;
};

}  // namespace ddl::data
