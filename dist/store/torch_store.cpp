// TorchStore: the client side of PyTorch's TCPStore protocol (see torch_store.h).
#include <unistd.h>

#include <ddl/base/error.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/store_wire.h>
#include <ddl/dist/store/torch_store.h>

// Note [PyTorch TCPStore protocol]
// As PyTorch 1.13 speaks it (torch/csrc/distributed/c10d/TCPStore.cpp and the tcputil
// helpers in Utils.hpp): a request is one QueryType byte and its arguments. Integers go as
// raw host-order bytes (little-endian on every machine ddl runs on); a string or byte
// vector as a u64 length and its bytes; a key list as a u64 count and the strings.
//   SET   key value        -> no reply at all
//   GET   key              -> u64 n | n bytes. The key must exist, so the client sends a WAIT
//                             first, as PyTorch's own client does.
//   ADD   key i64 delta    -> i64 new value (stored as decimal text: a GET reads "5")
//   CHECK u64 n | n keys   -> u8 READY (0) or NOT_READY (1)
//   WAIT  u64 n | n keys   -> u8 STOP_WAITING (0), sent only once every key exists
// 1.13 has no VALIDATE handshake (2.x added one) and no way to cancel a WAIT: the server
// answers whenever the keys appear, maybe long after the client gave up, and that late byte
// would be read as the reply to the next request. So a timed-out WAIT closes the connection
// (the server drops a closed client's waits) and the next call opens a fresh one.

namespace ddl::dist {

using detail::Clock;
using detail::TorchQuery;

namespace detail {
namespace {

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}
std::string keys_request(TorchQuery q, const std::vector<std::string>& keys) {
  std::string out(1, static_cast<char>(q));
  put_u64(out, keys.size());
  for (const auto& k : keys) put_str(out, k);
  return out;
}

}  // namespace

std::string torch_set_request(const std::string& key, const std::string& value) {
  std::string out(1, static_cast<char>(TorchQuery::Set));
  put_str(out, key);
  put_str(out, value);
  return out;
}

std::string torch_get_request(const std::string& key) {
  std::string out(1, static_cast<char>(TorchQuery::Get));
  put_str(out, key);
  return out;
}

std::string torch_add_request(const std::string& key, int64_t delta) {
  std::string out(1, static_cast<char>(TorchQuery::Add));
  put_str(out, key);
  put_u64(out, static_cast<uint64_t>(delta));
  return out;
}

std::string torch_check_request(const std::vector<std::string>& keys) { return keys_request(TorchQuery::Check, keys); }

std::string torch_wait_request(const std::vector<std::string>& keys) { return keys_request(TorchQuery::Wait, keys); }

uint64_t torch_decode_u64(const char bytes[8]) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return v;
}

}  // namespace detail

namespace {

std::string wire_key(const std::string& key) { return detail::kTorchKeyPrefix + key; }

std::vector<std::string> wire_keys(const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(wire_key(k));
  return out;
}

}  // namespace

TorchStore::TorchStore(std::string host, int port, Millis timeout, Clock::time_point deadline)
    : Store(timeout), host_(std::move(host)), port_(port) {
  // One deadline for connecting and the first reply: a store that comes late must not get
  // a second full timeout to answer.
  set_deadline(deadline == Clock::time_point{} ? Clock::now() + timeout : deadline);
  try {
    fd_ = detail::tcp_connect(host_, port_, Clock::now() + bounded(timeout));
  } catch (const std::exception& e) {
    DDL_CHECK(false, "store: cannot reach the PyTorch TCPStore (torchrun's agent store) at ", where(), ": ", e.what());
  }
  // PyTorch's clients count themselves in "init/" (TCPStore::waitForWorkers); a PyTorch server
  // made with a world size waits for that count, so a ddl rank counts too. The reply also
  // shows the server speaks this protocol.
  std::lock_guard<std::mutex> lock(mu_);
  send(detail::torch_add_request(detail::kTorchInitKey, 1), "connect", detail::kTorchInitKey);
  char reply[8];
  if (!receive(reply, 8, bounded(timeout), "connect", detail::kTorchInitKey)) {
    lost_ = true;
    DDL_CHECK(false, "store: no reply from ", where(), " within ", timeout.count(),
              " ms: is it a PyTorch TCPStore (torchrun's agent store)? Unset TORCHELASTIC_USE_AGENT_STORE for "
              "a ddl store");
  }
  if (deadline == Clock::time_point{}) set_deadline({});
}

TorchStore::~TorchStore() {
  if (fd_ >= 0) close(fd_);
}

std::string TorchStore::where() const { return host_ + ":" + std::to_string(port_); }

std::string TorchStore::local_ip() const { return detail::local_ip(fd_); }

int TorchStore::connection(const char* what, const std::string& keys) {
  if (fd_ >= 0) return fd_;
  DDL_CHECK(!lost_, "store: ", what, "(", keys, "): the connection to the PyTorch TCPStore at ", where(),
            " was lost after an earlier error");
  try {
    fd_ = detail::tcp_connect(host_, port_, Clock::now() + std::max(bounded(timeout()), Millis(1)));
  } catch (const std::exception& e) {
    lost_ = true;
    DDL_CHECK(false, "store: ", what, "(", keys, "): cannot reconnect to the PyTorch TCPStore at ", where(), ": ",
              e.what());
  }
  return fd_;
}

void TorchStore::drop() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void TorchStore::send(const std::string& request, const char* what, const std::string& keys) {
  int fd = connection(what, keys);
  try {
    detail::send_all(fd, request.data(), request.size());
  } catch (const std::exception& e) {
    drop();
    lost_ = true;
    DDL_CHECK(false, "store: ", what, "(", keys, ") on the PyTorch TCPStore at ", where(), " failed: ", e.what());
  }
}

bool TorchStore::receive(void* reply, size_t n, Millis timeout, const char* what, const std::string& keys) {
  bool ok = false;
  try {
    ok = detail::recv_all(fd_, reply, n, Clock::now() + timeout);
  } catch (const std::exception& e) {
    drop();
    lost_ = true;
    DDL_CHECK(false, "store: ", what, "(", keys, ") on the PyTorch TCPStore at ", where(), " failed: ", e.what(),
              " (did torchrun's agent exit? It also hangs up on an add to a key whose value is not an integer)");
  }
  if (!ok) drop();  // a reply may still come: see Note [PyTorch TCPStore protocol]
  return ok;
}

void TorchStore::reply_or_throw(void* reply, size_t n, const char* what, const std::string& keys) {
  // Answered at once: a short floor lets a request still report an error to the other
  // ranks once the rendezvous deadline has passed.
  const Millis bound = std::max(bounded(timeout()), std::min(timeout(), Millis(1000)));
  if (receive(reply, n, bound, what, keys)) return;
  lost_ = true;  // the server answers these at once: it is stuck or not a PyTorch store
  DDL_CHECK(false, "store: ", what, "(", keys, "): no reply from the PyTorch TCPStore at ", where(), " within ",
            bound.count(), " ms");
}

void TorchStore::bad_reply(const char* what, const std::string& keys, int reply) {
  drop();
  lost_ = true;
  ::ddl::detail::throw_error(
      __FILE__, __LINE__,
      ::ddl::detail::str_cat("store: ", what, "(", keys, "): unexpected reply byte ", reply, " from ", where(),
                             ": is it a PyTorch 1.13 TCPStore? Unset "
                             "TORCHELASTIC_USE_AGENT_STORE for a ddl store"));
}

void TorchStore::wait_locked(const std::vector<std::string>& keys, Millis timeout, const char* what) {
  timeout = bounded(timeout);
  const std::string names = detail::join_keys(keys);
  send(detail::torch_wait_request(wire_keys(keys)), what, names);
  char r = 0;
  DDL_CHECK(receive(&r, 1, timeout, what, names), "store: timed out after ", timeout.count(), " ms in ", what,
            " waiting for key(s) ", names, " on the PyTorch TCPStore at ", where(),
            " (did every rank start? a rank that crashed before this point never sets its keys)");
  if (r != detail::kTorchStopWaiting) bad_reply(what, names, r);
}

void TorchStore::set(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  send(detail::torch_set_request(wire_key(key), value), "set", key);
}

std::string TorchStore::get(const std::string& key, Millis timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  wait_locked({key}, timeout, "get");
  send(detail::torch_get_request(wire_key(key)), "get", key);
  char head[8];
  reply_or_throw(head, 8, "get", key);
  const uint64_t n = detail::torch_decode_u64(head);
  if (n > detail::kMaxValueBytes) {
    drop();
    lost_ = true;
    DDL_CHECK(false, "store: get(", key, "): ", where(), " sent a ", n, "-byte value, over ddl's limit of ",
              detail::kMaxValueBytes, " bytes");
  }
  std::string value(n, '\0');
  if (n > 0) reply_or_throw(value.data(), n, "get", key);
  return value;
}

int64_t TorchStore::add(const std::string& key, int64_t delta) {
  std::lock_guard<std::mutex> lock(mu_);
  send(detail::torch_add_request(wire_key(key), delta), "add", key);
  char r[8];
  reply_or_throw(r, 8, "add", key);
  return static_cast<int64_t>(detail::torch_decode_u64(r));
}

bool TorchStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string names = detail::join_keys(keys);
  send(detail::torch_check_request(wire_keys(keys)), "check", names);
  char r = 0;
  reply_or_throw(&r, 1, "check", names);
  if (r != detail::kTorchReady && r != detail::kTorchNotReady) bad_reply("check", names, r);
  return r == detail::kTorchReady;
}

void TorchStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  wait_locked(keys, timeout, "wait");
}

}  // namespace ddl::dist
