// DataLoader: batching, collation and the worker threads.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <ddl/data/dataloader.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/thread_name.h>
#include <ddl/trace/trace.h>

namespace ddl::data {

Batch collate(const std::vector<Example>& examples) {
  DDL_CHECK(!examples.empty(), "collate: no examples to stack");
  const Example& first = examples[0];
  DDL_CHECK(first.data.defined() && first.target.defined(),
            "collate: example 0 has an undefined data or target tensor");
  auto stack = [&](auto member, const char* what) {
    const Tensor& t0 = first.*member;
    Shape shape = t0.shape();
    shape.insert(0, static_cast<int64_t>(examples.size()));
    Tensor out = empty(shape, t0.dtype());
    const size_t bytes = t0.nbytes();
    auto* o = static_cast<uint8_t*>(out.raw_data());
    for (size_t i = 0; i < examples.size(); ++i) {
      const Tensor& t = examples[i].*member;
      DDL_CHECK(t.defined() && t.shape() == t0.shape() && t.dtype() == t0.dtype(), "collate: example ", i, "'s ", what,
                " is ", t.defined() ? describe(t) : std::string("undefined"), " but example 0's is ", describe(t0),
                "; every example of a batch needs the same shape and dtype (resize images to one size)");
      const Tensor c = t.contiguous();
      if (bytes > 0) std::memcpy(o + i * bytes, c.raw_data(), bytes);
    }
    return out;
  };
  return {stack(&Example::data, "data"), stack(&Example::target, "target")};
}

// Note [Loader pipeline]
// An epoch is a fixed list of batches: batch b holds the sampler's indices
// [b * B, (b + 1) * B). Workers claim batch numbers in increasing order from a
// shared counter, but only while the claim is within `window` (num_workers *
// prefetch_factor) of the batch the consumer waits for; finished batches wait
// in `ready_` until the consumer takes them in order. Batch b's contents depend
// only on b (the indices, the seed and the epoch: Note [Reproducible
// augmentation]), never on which worker made it or when. The Epoch dies with
// the last iterator: it sets `stop_`, wakes the workers and joins them; a
// worker finishes at most the batch in its hands.
class DataLoader::Epoch {
 public:
  Epoch(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices, int64_t batch_size, bool drop_last,
        uint64_t seed, int64_t epoch, int64_t num_workers, int64_t prefetch_factor, bool pin_memory,
        std::function<Batch(const std::vector<Example>&)> collate_fn)
      : dataset_(std::move(dataset)),
        indices_(std::move(indices)),
        batch_size_(batch_size),
        seed_(seed),
        epoch_(epoch),
        pin_memory_(pin_memory),
        pin_device_(pin_memory && num_workers > 0 ? current_device() : Device::cpu()),
        collate_(collate_fn ? std::move(collate_fn) : collate),
        window_(num_workers * prefetch_factor) {
    const int64_t n = static_cast<int64_t>(indices_.size());
    num_batches_ = drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
    const int64_t threads = std::min(num_workers, num_batches_);
    try {
      for (int64_t w = 0; w < threads; ++w)
        workers_.emplace_back([this, w] {
          trace::set_thread_name("data loader " + std::to_string(w));  // its track in --trace files
          trace::set_os_thread_name("loader " + std::to_string(w));    // ps -L, top -H
          work();
        });
    } catch (...) {
      shutdown();  // a thread failed to start: join the ones that did
      throw;
    }
  }

  ~Epoch() { shutdown(); }

  // The next batch in order into `out`; false at the end of the epoch.
  bool next(Batch& out) {
    if (next_ >= num_batches_) return false;
    if (workers_.empty()) {
      out = load(next_++);
      return true;
    }
    Slot slot;
    {
      trace::Span wait("wait for batch", "data", {{"batch", next_}});
      std::unique_lock<std::mutex> lock(mu_);
      ready_cv_.wait(lock, [&] { return ready_.count(next_) > 0; });
      auto it = ready_.find(next_);
      slot = std::move(it->second);
      ready_.erase(it);
      ++next_;
    }
    space_.notify_all();
    if (slot.error) std::rethrow_exception(slot.error);
    out = std::move(slot.batch);
    return true;
  }

 private:
  struct Slot {
    Batch batch;
    std::exception_ptr error;
  };

  Batch load(int64_t b) const {
    trace::Span span("load batch", "data", {{"batch", b}});
    const int64_t begin = b * batch_size_;
    const int64_t end = std::min<int64_t>(begin + batch_size_, static_cast<int64_t>(indices_.size()));
    std::vector<Example> examples;
    examples.reserve(static_cast<size_t>(end - begin));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t index = indices_[static_cast<size_t>(i)];
      try {
        TransformContext ctx(seed_, epoch_, index);
        examples.push_back(dataset_->get(index, ctx));
      } catch (const std::exception& e) {
        DDL_CHECK(false, "DataLoader: batch ", b, ", example ", index, ": ", e.what());
      }
    }
    try {
      // The current GPU is per thread: pin with the caller's, or a worker opens a context on
      // cuda:0 (PyTorch's pin-memory thread sets its device for the same reason).
      if (pin_device_.is_cuda()) set_current_device(pin_device_);  // set in workers only
      Batch batch = collate_(examples);
      if (pin_memory_) {  // in the worker thread, off the training loop's path
        batch.data = batch.data.pin_memory();
        batch.target = batch.target.pin_memory();
      }
      return batch;
    } catch (const std::exception& e) {
      DDL_CHECK(false, "DataLoader: batch ", b, ": ", e.what());
    }
  }

  void shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    space_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  void work() {
    for (;;) {
      int64_t b;
      {
        std::unique_lock<std::mutex> lock(mu_);
        space_.wait(lock, [&] { return stop_ || claim_ >= num_batches_ || claim_ < next_ + window_; });
        if (stop_ || claim_ >= num_batches_) return;
        b = claim_++;
      }
      Slot slot;
      try {
        slot.batch = load(b);
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_[b] = std::move(slot);
      }
      ready_cv_.notify_one();
    }
  }

  std::shared_ptr<const Dataset> dataset_;
  std::vector<int64_t> indices_;
  int64_t batch_size_;
  uint64_t seed_;
  int64_t epoch_;
  bool pin_memory_;
  Device pin_device_;  // the current GPU of the thread that began the epoch, for the workers
  std::function<Batch(const std::vector<Example>&)> collate_;
  int64_t window_;
  int64_t num_batches_ = 0;

  std::mutex mu_;
  std::condition_variable space_;     // workers wait here for room in the window
  std::condition_variable ready_cv_;  // the consumer waits here for batch next_
  bool stop_ = false;
  int64_t claim_ = 0;  // next batch a worker may take
  int64_t next_ = 0;   // next batch the consumer takes
  std::map<int64_t, Slot> ready_;
  std::vector<std::thread> workers_;
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  DDL_CHECK(dataset_ != nullptr, "DataLoader: dataset is null");
  DDL_CHECK(options_.batch_size() >= 1, "DataLoader: batch_size must be at least 1, got ", options_.batch_size());
  DDL_CHECK(options_.workers() >= 0, "DataLoader: workers must be non-negative, got ", options_.workers());
  DDL_CHECK(options_.prefetch_factor() >= 1, "DataLoader: prefetch_factor must be at least 1, got ",
            options_.prefetch_factor());
  if (options_.sampler())
    sampler_ = options_.sampler();
  else if (options_.shuffle())
    sampler_ = std::make_shared<RandomSampler>(dataset_->size(), options_.seed());
  else
    sampler_ = std::make_shared<SequentialSampler>(dataset_->size());
}

int64_t DataLoader::size() const {
  const int64_t n = sampler_->size(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() const {
  return Iterator(std::make_shared<Epoch>(dataset_, sampler_->indices(), options_.batch_size(), options_.drop_last(),
                                          options_.seed(), sampler_->epoch(), options_.workers(),
                                          options_.prefetch_factor(), options_.pin_memory() && cuda::is_available(),
                                          options_.collate_fn()));
}

DataLoader::Iterator::Iterator(std::shared_ptr<Epoch> epoch) : epoch_(std::move(epoch)) { ++*this; }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  if (!epoch_) return *this;
  try {
    if (!epoch_->next(current_)) {
      epoch_.reset();
      current_ = Batch();
    }
  } catch (...) {
    epoch_.reset();  // stops the workers before the error leaves
    throw;
  }
  return *this;
}

}  // namespace ddl::data
