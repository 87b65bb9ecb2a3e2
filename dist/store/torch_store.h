// TorchStore: a client of PyTorch's c10d TCPStore, so ranks started by plain torchrun
// rendezvous through the store its agent already serves on MASTER_PORT
// (TORCHELASTIC_USE_AGENT_STORE=True). It speaks the protocol of PyTorch 1.13 (Debian's
// python3-torch): no handshake, raw little-endian integers, u64-length-prefixed strings.
// Client only: ddl never serves this protocol, and PyTorch-only requests (compare_set,
// delete_key, watch_key, num_keys) are not offered. See Note [PyTorch TCPStore protocol].
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <ddl/dist/store/store.h>

namespace ddl::dist {

class TorchStore : public Store {
 public:
  using Store::get;
  using Store::wait;
  // Connects to host:port, retrying until `timeout` (the agent may still be starting), then
  // counts itself in PyTorch's "init/" key as PyTorch's own clients do.
  // Connecting and the first reply end together by `deadline` when set (else `timeout`
  // from now), and so does every request until set_deadline({}) (Store::set_deadline).
  TorchStore(std::string host, int port, Millis timeout = kDefaultTimeout,
             std::chrono::steady_clock::time_point deadline = {});
  ~TorchStore() override;
  TorchStore(const TorchStore&) = delete;
  TorchStore& operator=(const TorchStore&) = delete;

  // PyTorch's SET has no reply: a server-side failure shows at the next call.
  void set(const std::string& key, const std::string& value) override;
  // Every wait ends by `timeout` with a ddl::Error naming the key(s) and the address.
  std::string get(const std::string& key, Millis timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  bool check(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, Millis timeout) override;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // IP of this machine's interface that reaches the store: a good Gloo hostname.
  std::string local_ip() const;

 private:
  // The open connection, reopened after a timed-out wait (see Note [PyTorch TCPStore
  // protocol]); throws when it was lost to an error.
  int connection(const char* what, const std::string& keys);
  void drop();  // closes the connection
  void send(const std::string& request, const char* what, const std::string& keys);
  // Reads exactly n bytes within `timeout`; false (connection dropped) when they did not come.
  bool receive(void* reply, size_t n, Millis timeout, const char* what, const std::string& keys);
  // receive() for replies the server sends at once: a timeout is an error.
  void reply_or_throw(void* reply, size_t n, const char* what, const std::string& keys);
  void wait_locked(const std::vector<std::string>& keys, Millis timeout, const char* what);
  // Drops the connection for good and throws: the reply was not PyTorch's.
  [[noreturn]] void bad_reply(const char* what, const std::string& keys, int reply);
  std::string where() const;

  std::string host_;
  int port_;
  std::mutex mu_;  // one request on the socket at a time
  int fd_ = -1;
  bool lost_ = false;  // the connection broke (not a timeout): later calls fail at once
};

namespace detail {

// PyTorch 1.13's c10d::detail::QueryType (torch/csrc/distributed/c10d/TCPStore.cpp).
enum class TorchQuery : uint8_t { Set = 0, CompareSet = 1, Get = 2, Add = 3, Check = 4, Wait = 5 };
// CheckResponseType and WaitResponseType of the same file.
inline constexpr uint8_t kTorchReady = 0;        // CHECK: every key exists
inline constexpr uint8_t kTorchNotReady = 1;     // CHECK: some key is missing
inline constexpr uint8_t kTorchStopWaiting = 0;  // WAIT: every key exists now
// PyTorch's client puts "/" before every user key, so ddl and Python see the same keys.
inline constexpr char kTorchKeyPrefix[] = "/";
// The key PyTorch's clients add 1 to when they connect (no "/" prefix).
inline constexpr char kTorchInitKey[] = "init/";

// The exact bytes of each request; keys are sent as given (already prefixed).
std::string torch_set_request(const std::string& key, const std::string& value);
std::string torch_get_request(const std::string& key);
std::string torch_add_request(const std::string& key, int64_t delta);
std::string torch_check_request(const std::vector<std::string>& keys);
std::string torch_wait_request(const std::vector<std::string>& keys);
// Reply decoders: little-endian u64 length of a GET reply, i64 of an ADD reply.
uint64_t torch_decode_u64(const char bytes[8]);

}  // namespace detail
}  // namespace ddl::dist
