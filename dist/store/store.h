// Key-value stores for rendezvous: the Store interface, HashStore (in one process,
// for thread-based tests) and PrefixStore (a namespace inside another store).
// Ranks swap addresses and small metadata through a store; tensors never go through it.
// TCPStore (tcp_store.h) and FileStore (file_store.h) are the multi-process ones.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ddl::dist {

using Millis = std::chrono::milliseconds;
// Default wait for rendezvous and collectives: 5 minutes (torchrun's default too).
inline constexpr Millis kDefaultTimeout{5 * 60 * 1000};
// The timeout a job asked for: DDL_TIMEOUT in seconds ("30", "0.5"; ddlrun and train_cifar
// set it with --timeout), else kDefaultTimeout. Throws ddl::Error naming the variable when
// it is not a positive number.
Millis configured_timeout();

class Store {
 public:
  explicit Store(Millis timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;

  // Values are byte strings (std::string holds any bytes).
  virtual void set(const std::string& key, const std::string& value) = 0;
  // Blocks until `key` exists, then returns its value. Throws ddl::Error after `timeout`.
  virtual std::string get(const std::string& key, Millis timeout) = 0;
  // Atomically adds delta to the integer stored at key (absent = 0) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // True when every key exists right now; never blocks.
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Blocks until every key exists. Throws ddl::Error naming the missing keys after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, Millis timeout) = 0;

  std::string get(const std::string& key) { return get(key, timeout_); }
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  Millis timeout() const { return timeout_; }
  void set_timeout(Millis t) { timeout_ = t; }
  // Until cleared ({}), no request of a network store (TCPStore, TorchStore) waits past
  // `deadline`: init_process_group's one deadline for the whole rendezvous, so a slow store
  // cannot let connecting, each request and Gloo's exchange wait a full timeout each.
  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline.time_since_epoch().count(); }

 protected:
  // `timeout`, cut to what is left before set_deadline's deadline (never below 0).
  Millis bounded(Millis timeout) const;

 private:
  Millis timeout_;
  std::atomic<std::chrono::steady_clock::rep> deadline_{0};
};

// All keys in one std::map guarded by a mutex; get/wait sleep on a condition variable.
class HashStore : public Store {
 public:
  using Store::get;
  using Store::wait;
  explicit HashStore(Millis timeout = kDefaultTimeout) : Store(timeout) {}
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, Millis timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  // The keys stored now that end with `suffix` (for a launcher looking at its own store).
  std::vector<std::string> keys_ending_with(const std::string& suffix);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> data_;
};

// Prepends "prefix/" to every key, so several groups (or restarts) can share one store.
class PrefixStore : public Store {
 public:
  using Store::get;
  using Store::wait;
  PrefixStore(std::string prefix, std::shared_ptr<Store> base);
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key, Millis timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;
  const std::shared_ptr<Store>& base() const { return base_; }

 private:
  std::string key(const std::string& k) const { return prefix_ + "/" + k; }
  std::vector<std::string> keys(const std::vector<std::string>& ks) const;
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

namespace detail {
// "a, b, c" (at most 8 shown) for error messages.
std::string join_keys(const std::vector<std::string>& keys);
// Parses a stored counter; throws ddl::Error when the value is not a decimal integer.
int64_t parse_counter(const std::string& key, const std::string& value);
}  // namespace detail

}  // namespace ddl::dist
