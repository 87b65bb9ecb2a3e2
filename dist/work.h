// Work: the handle an asynchronous collective returns. The backend completes it
// (with or without an error) on its worker thread; wait() blocks the caller and
// rethrows the operation's error there. A Work never outlives its guarantee: every
// operation has a timeout, so every Work completes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace ddl::dist {

class Work {
 public:
  explicit Work(std::string description) : description_(std::move(description)) {}
  virtual ~Work() = default;

  // Blocks until the operation finished; rethrows its error (a ddl::Error naming the op,
  // rank and peer). With a timeout, throws ddl::Error if it has not finished by then
  // (the operation itself keeps running and completes or fails on its own timeout).
  // A GPU backend overrides wait() to make the caller's current stream wait instead of
  // the host (see NcclWork in dist/nccl/); wait(timeout) always blocks the host.
  virtual void wait();
  void wait(std::chrono::milliseconds timeout);
  bool is_completed() const;
  // Completed without error. Only meaningful once is_completed().
  bool is_success() const;
  std::exception_ptr exception() const;
  // "all_reduce(float32[1000], sum)": what this handle stands for.
  const std::string& description() const { return description_; }

  // Backend side: record the outcome and wake every waiter. Runs `then` callbacks.
  void finish(std::exception_ptr error = nullptr);
  // Runs fn(*this) when the work completes (at once when it already has), on the
  // completing thread. For DDP's bookkeeping; keep it short and never throw.
  void on_completion(std::function<void(Work&)> fn);

 private:
  std::string description_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<std::function<void(Work&)>> callbacks_;
};

}  // namespace ddl::dist
