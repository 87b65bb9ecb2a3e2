// GeneratorDataset and StreamLoader's batching.
#include <utility>
#include <vector>

#include <ddl/data/stream.h>

namespace ddl::data {
namespace {

class GeneratorStream : public IterableDataset::Stream {
 public:
  explicit GeneratorStream(GeneratorDataset::NextFn next) : next_(std::move(next)) {}
  std::optional<Example> next() override {
    if (finished_) return std::nullopt;  // once ended, ended for good, whatever the function does next
    std::optional<Example> e = next_();
    finished_ = !e;
    return e;
  }

 private:
  GeneratorDataset::NextFn next_;
  bool finished_ = false;
};

}  // namespace

GeneratorDataset::GeneratorDataset(std::function<NextFn(int64_t)> make) : make_(std::move(make)) {
  DDL_CHECK(make_ != nullptr, "GeneratorDataset: no generator function given");
}

std::unique_ptr<IterableDataset::Stream> GeneratorDataset::open(int64_t epoch) const {
  NextFn next = make_(epoch);
  DDL_CHECK(next != nullptr, "GeneratorDataset: the function returned no generator for epoch ", epoch);
  return std::make_unique<GeneratorStream>(std::move(next));
}

StreamLoader::StreamLoader(std::shared_ptr<const IterableDataset> dataset, int64_t batch_size, bool drop_last,
                           std::function<Batch(const std::vector<Example>&)> collate_fn)
    : dataset_(std::move(dataset)),
      batch_size_(batch_size),
      drop_last_(drop_last),
      collate_(collate_fn ? std::move(collate_fn) : collate) {
  DDL_CHECK(dataset_ != nullptr, "StreamLoader: no dataset given");
  DDL_CHECK(batch_size > 0,
            "StreamLoader: batch_size should be a positive integer value, but got batch_size=", batch_size);
}

StreamLoader::Iterator StreamLoader::begin() const {
  std::shared_ptr<IterableDataset::Stream> stream = dataset_->open(epoch_);
  DDL_CHECK(stream != nullptr, "StreamLoader: the dataset opened no stream for epoch ", epoch_);
  return Iterator(this, std::move(stream));
}

StreamLoader::Iterator::Iterator(const StreamLoader* loader, std::shared_ptr<IterableDataset::Stream> stream)
    : loader_(loader), stream_(std::move(stream)) {
  ++*this;
}

// Reads the next batch_size examples; a short last batch is kept unless drop_last, and an empty one ends the pass.
StreamLoader::Iterator& StreamLoader::Iterator::operator++() {
  if (done()) return *this;
  std::vector<Example> examples;
  examples.reserve(static_cast<size_t>(loader_->batch_size_));
  while (static_cast<int64_t>(examples.size()) < loader_->batch_size_) {
    std::optional<Example> e = stream_->next();
    if (!e) break;
    examples.push_back(std::move(*e));
  }
  const bool short_batch = static_cast<int64_t>(examples.size()) < loader_->batch_size_;
  if (examples.empty() || (short_batch && loader_->drop_last_)) {
    stream_.reset();
    current_ = {};
    return *this;
  }
  current_ = loader_->collate_(examples);
  return *this;
}

}  // namespace ddl::data
