// The Gloo calls behind ProcessGroupGloo, one function per collective, plus the adapter
// that lets any ddl Store serve Gloo's rendezvous. Internal: ProcessGroupGloo validates
// arguments, makes tensors contiguous and runs these on its worker thread. Each returns
// the bytes it put on the wire (traffic.h).
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/dist/process_group.h>
#include <ddl/dist/store/store.h>
#include <ddl/dist/traffic.h>

namespace gloo {
class Context;
}

namespace ddl::dist::detail {

class ShmAllReduce;

// What a rendezvous wait throws when another rank reported that it could not start.
class PeerStartupError : public Error {
 public:
  using Error::Error;
};

// Gloo's rendezvous Store on top of ours. Implements wait(keys, timeout) too: Gloo's
// connect step calls that overload, and the base version would ignore the timeout. Every
// wait also ends at `deadline` (the whole rendezvous gets one timeout, not one per peer)
// and as soon as some rank reports a fatal start-up error under kFatalKey.
class GlooStoreAdapter : public gloo::rendezvous::Store {
 public:
  static constexpr const char* kFatalKey = "fatal";
  explicit GlooStoreAdapter(std::shared_ptr<dist::Store> store, std::chrono::steady_clock::time_point deadline =
                                                                    std::chrono::steady_clock::time_point::max())
      : store_(std::move(store)), deadline_(deadline) {}
  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;
  // The keys a wait is blocked on now ("" when none): what a timeout message names.
  std::string waiting_for() const;
  // Gloo's rendezvous reads rank r's pair addresses under key "<r>" and fails on a wrong
  // size with a bare "enforce fail ... 136 vs 36". Once set, get() checks that size first
  // and names the key, the rank and the store (`where`, e.g. " at 10.0.0.1:29500").
  void expect_addresses(int size, std::string where) {
    size_ = size;
    where_ = std::move(where);
  }

 private:
  std::shared_ptr<dist::Store> store_;
  std::chrono::steady_clock::time_point deadline_;
  mutable std::mutex mu_;
  std::string waiting_for_;
  int size_ = 0;
  std::string where_;
};

// Everything a collective needs besides its tensors. Tensors are contiguous CPU tensors.
struct GlooCall {
  std::shared_ptr<gloo::Context> ctx;
  uint32_t tag;  // unique per call, the same on every rank (a sequence number)
  std::chrono::milliseconds timeout;
  ShmAllReduce* shm = nullptr;  // set when every rank shares this host's memory
};

Traffic gloo_all_reduce(const GlooCall& c, const Tensor& t, ReduceOp op);
Traffic gloo_broadcast(const GlooCall& c, const Tensor& t, int root);
Traffic gloo_reduce(const GlooCall& c, const Tensor& t, int root, ReduceOp op);
Traffic gloo_all_gather(const GlooCall& c, const Tensor& out, const Tensor& in);
Traffic gloo_reduce_scatter(const GlooCall& c, const Tensor& out, const Tensor& in, ReduceOp op);
Traffic gloo_gather(const GlooCall& c, const Tensor& out, const Tensor& in, int root);
Traffic gloo_scatter(const GlooCall& c, const Tensor& out, const Tensor& in, int root);
Traffic gloo_all_to_all(const GlooCall& c, const Tensor& out, const Tensor& in);
Traffic gloo_barrier(const GlooCall& c);
// Exchanges a fixed-size record with every rank (for DDL_DEBUG): out[r] is rank r's record.
std::vector<std::string> gloo_exchange_records(const GlooCall& c, const std::string& mine, Traffic* traffic);

}  // namespace ddl::dist::detail
