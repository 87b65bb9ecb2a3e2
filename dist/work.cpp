// Work handles (see work.h).
#include <vector>

#include <ddl/base/error.h>
#include <ddl/dist/work.h>

namespace ddl::dist {

void Work::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
}

void Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  bool ok = cv_.wait_for(lock, timeout, [&] { return done_; });
  DDL_CHECK(ok, description_, ": Work::wait timed out after ", timeout.count(), " ms (the operation is still pending)");
  if (error_) std::rethrow_exception(error_);
}

bool Work::is_completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

bool Work::is_success() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_ && !error_;
}

std::exception_ptr Work::exception() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void Work::finish(std::exception_ptr error) {
  std::vector<std::function<void(Work&)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    DDL_ASSERT(!done_, "Work::finish called twice for ", description_);
    done_ = true;
    error_ = error;
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& fn : callbacks) fn(*this);
}

void Work::on_completion(std::function<void(Work&)> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!done_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn(*this);
}

}  // namespace ddl::dist
