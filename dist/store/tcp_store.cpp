// TCPStoreServer and the TCPStore client (see tcp_store.h, store_wire.h).
#include "dist/store/tcp_store.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <thread>

#include "dist/store/socket.h"
#include "dist/store/store_wire.h"
#include "tensor/error.h"

namespace ddl::dist {

using detail::Op;
using detail::Status;
using detail::WireError;
using detail::WireReader;
using detail::WireWriter;

namespace {

// Constant-time comparison, so a token cannot be guessed byte by byte from reply timings.
bool same_token(const std::string& a, const std::string& b) {
  unsigned diff = a.size() != b.size();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) diff |= unsigned(a[i] ^ b[i]);
  return diff == 0;
}

std::string reply(Status s, const std::string& payload = "") {
  return WireWriter().u8(static_cast<uint8_t>(s)).str(payload).frame();
}

// Reads one frame body; returns false when `stop` is raised while idle.
// `idle_limit` bounds the wait for the first byte (0: none, an idle client may stay).
bool read_frame(int fd, std::string& body, const std::atomic<bool>& stop, Millis idle_limit = Millis(0)) {
  char head[4];
  // Poll in slices so a stopping server never waits on an idle client.
  const auto idle_until = detail::Clock::now() + idle_limit;
  while (true) {
    pollfd pfd{fd, POLLIN, 0};
    int rc = poll(&pfd, 1, 100);
    if (stop.load()) return false;
    if (rc > 0) break;
    if (idle_limit.count() > 0 && detail::Clock::now() > idle_until)
      throw WireError("no message within " + std::to_string(idle_limit.count()) + " ms");
  }
  auto deadline = detail::Clock::now() + std::chrono::seconds(30);
  if (!detail::recv_all(fd, head, 4, deadline)) throw WireError("timed out reading a header");
  body.resize(detail::decode_frame_length(head));
  if (!detail::recv_all(fd, body.data(), body.size(), deadline))
    throw WireError("timed out reading a " + std::to_string(body.size()) + "-byte message");
  return true;
}

}  // namespace

TCPStoreServer::TCPStoreServer(const std::string& host, int port, std::string token) : token_(std::move(token)) {
  // See Note [Job tokens] in dist/env.cpp: beyond loopback, a store without a token is open to anyone.
  DDL_CHECK(!token_.empty() || detail::is_loopback(host), "store: refusing to serve on ", host, ":", port,
            " without a job token: other machines can reach that address, and anyone who reaches it could join "
            "the job and read or overwrite its keys (the ranks' addresses included). Give every rank the same "
            "token: DDL_JOB_TOKEN=<secret>, or DDL_JOB_TOKEN_FILE=<a file only you can read, chmod 600> "
            "(ddlrun makes one; under Slurm or Open MPI it is derived from ~/.ddl/secret); or serve on "
            "127.0.0.1 when every rank runs on this host");
  listen_fd_ = detail::tcp_listen(host, port, &port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TCPStoreServer::~TCPStoreServer() {
  stop_ = true;
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(conn_mu_);
    for (int fd : conn_fds_) shutdown(fd, SHUT_RDWR);
    threads.swap(conn_threads_);
  }
  for (auto& t : threads) t.join();  // each closes its own socket
}

int64_t TCPStoreServer::clients() const {
  std::lock_guard<std::mutex> lock(conn_mu_);
  return static_cast<int64_t>(conn_fds_.size());
}

bool TCPStoreServer::has_startup_failure() { return !data_.keys_ending_with("/fatal").empty(); }

bool TCPStoreServer::linger(Millis max, Millis at_least) const {
  const auto start = detail::Clock::now(), deadline = start + max;
  while (clients() > 0 || detail::Clock::now() < start + at_least) {
    if (detail::Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(Millis(20));
  }
  return true;
}

std::string TCPStoreServer::address() const { return detail::local_address(listen_fd_); }

void TCPStoreServer::accept_loop() {
  while (!stop_) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(conn_mu_);
    conn_fds_.push_back(fd);
    conn_threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void TCPStoreServer::serve(int fd) {
  const std::string peer = detail::peer_address(fd);
  std::string body;
  bool counted = false;
  // Counted before the reply goes out, so a refused client already sees itself counted.
  auto refuse = [&](Status status, const std::string& why, const std::string& log) {
    rejected_++;
    counted = true;
    std::string m = reply(status, why);
    detail::send_all(fd, m.data(), m.size());
    throw WireError(log);
  };
  try {
    // The first message must be a HELLO with the right magic, version and token, soon:
    // a connection that never sends one would hold its thread forever.
    if (!read_frame(fd, body, stop_, Millis(30000))) throw std::runtime_error("stopping");  // still closes fd
    WireReader r(body.data(), body.size());
    if (r.u8() != uint8_t(Op::Hello) || r.u32() != detail::kWireMagic)
      throw WireError("not a ddl store client (bad HELLO)");
    uint32_t version = r.u32();
    std::string token = r.str(detail::kMaxKeyBytes);
    r.finish();
    if (version != detail::kWireVersion)
      refuse(Status::Error, "protocol version mismatch", "protocol version " + std::to_string(version));
    if (!token_.empty() && !same_token(token, token_)) {
      const std::string why = token.empty() ? "no job token" : "wrong job token";
      refuse(Status::Refused, why, "refused: " + why);
    }
    std::string ok = reply(Status::Ok);
    detail::send_all(fd, ok.data(), ok.size());
    while (read_frame(fd, body, stop_)) {
      std::string out = handle(body);
      detail::send_all(fd, out.data(), out.size());
    }
  } catch (const WireError& e) {
    if (!counted) rejected_++;
    std::cerr << "[ddl store] dropped client " << peer << " (" << e.what() << ")\n";
  } catch (const std::exception&) {
    // The client went away (closed socket): nothing to report.
  }
  std::lock_guard<std::mutex> lock(conn_mu_);
  std::erase(conn_fds_, fd);
  close(fd);
}

std::string TCPStoreServer::handle(const std::string& body) {
  WireReader r(body.data(), body.size());
  auto op = static_cast<Op>(r.u8());
  auto read_keys = [&] {
    uint32_t n = r.u32();
    if (n > detail::kMaxKeysPerRequest) throw WireError("too many keys: " + std::to_string(n));
    std::vector<std::string> keys;
    for (uint32_t i = 0; i < n; ++i) keys.push_back(r.str(detail::kMaxKeyBytes));
    return keys;
  };
  // Blocking waits run in 100 ms slices so a stopping server is never stuck behind them.
  auto wait_keys = [&](const std::vector<std::string>& keys, int64_t timeout_ms) {
    if (timeout_ms < 0) throw WireError("negative timeout");
    auto deadline = detail::Clock::now() + Millis(timeout_ms);
    while (!data_.check(keys)) {
      if (stop_ || detail::Clock::now() >= deadline) return false;
      try {
        data_.wait(keys, Millis(100));
      } catch (const Error&) {
      }
    }
    return true;
  };
  auto stopped_or_timeout = [&] {
    return stop_ ? reply(Status::Error, "the store server is shutting down") : reply(Status::Timeout);
  };
  switch (op) {
    case Op::Set: {
      std::string key = r.str(detail::kMaxKeyBytes);
      std::string value = r.str(detail::kMaxValueBytes);
      r.finish();
      data_.set(key, value);
      return reply(Status::Ok);
    }
    case Op::Get: {
      std::string key = r.str(detail::kMaxKeyBytes);
      int64_t timeout_ms = r.i64();
      r.finish();
      if (!wait_keys({key}, timeout_ms)) return stopped_or_timeout();
      return reply(Status::Ok, data_.get(key, Millis(0)));
    }
    case Op::Add: {
      std::string key = r.str(detail::kMaxKeyBytes);
      int64_t delta = r.i64();
      r.finish();
      try {
        return reply(Status::Ok, std::to_string(data_.add(key, delta)));
      } catch (const Error& e) {
        return reply(Status::Error, e.what());
      }
    }
    case Op::Check: {
      auto keys = read_keys();
      r.finish();
      return reply(Status::Ok, data_.check(keys) ? "1" : "0");
    }
    case Op::Wait: {
      auto keys = read_keys();
      int64_t timeout_ms = r.i64();
      r.finish();
      return wait_keys(keys, timeout_ms) ? reply(Status::Ok) : stopped_or_timeout();
    }
    default:
      throw WireError("unknown opcode " + std::to_string(int(op)));
  }
}

TCPStore::TCPStore(std::string host, int port, TCPStoreOptions opts)
    : Store(opts.timeout),
      host_(std::move(host)),
      port_(port),
      token_note_(opts.token.empty()
                      ? "this rank has none"
                      : "from " + (opts.token_source.empty() ? std::string("the caller") : opts.token_source)) {
  if (opts.is_server) {
    server_ = std::make_unique<TCPStoreServer>(host_, port_, opts.token);
    port_ = server_->port();
  }
  fd_ = detail::tcp_connect(host_, port_, detail::Clock::now() + opts.timeout);
  std::string hello =
      WireWriter().u8(uint8_t(Op::Hello)).u32(detail::kWireMagic).u32(detail::kWireVersion).str(opts.token).frame();
  try {
    request(hello, "connect", host_ + ":" + std::to_string(port_), opts.timeout);
  } catch (...) {
    if (fd_ >= 0) close(fd_);
    throw;
  }
}

TCPStore::~TCPStore() {
  if (fd_ >= 0) close(fd_);
  server_.reset();
}

std::string TCPStore::local_ip() const { return detail::local_ip(fd_); }

std::string TCPStore::request(const std::string& frame, const char* what, const std::string& key_desc, Millis timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string where = "store " + host_ + ":" + std::to_string(port_);
  DDL_CHECK(fd_ >= 0, "store: ", what, "(", key_desc, "): the connection to ", where,
            " was lost after an earlier error");
  // The server answers a timed wait itself; the extra margin only catches a dead server.
  auto deadline = detail::Clock::now() + timeout + std::chrono::seconds(10);
  std::string body;
  try {
    detail::send_all(fd_, frame.data(), frame.size());
    char head[4];
    bool ok = detail::recv_all(fd_, head, 4, deadline);
    if (ok) {
      body.resize(detail::decode_frame_length(head));
      ok = detail::recv_all(fd_, body.data(), body.size(), deadline);
    }
    DDL_CHECK(ok, "no reply within ", timeout.count(), " ms");
  } catch (const std::exception& e) {
    close(fd_);
    fd_ = -1;
    DDL_CHECK(false, "store: ", what, "(", key_desc, ") on ", where, " failed: ", e.what());
  }
  WireReader r(body.data(), body.size());
  std::string payload;
  Status status;
  try {
    status = static_cast<Status>(r.u8());
    payload = r.str(detail::kMaxValueBytes);
    r.finish();
  } catch (const WireError& e) {
    DDL_CHECK(false, "store: malformed reply from ", where, ": ", e.what());
  }
  DDL_CHECK(status != Status::Refused, "store: the store at ", host_, ":", port_, " refused this rank's job token (",
            token_note_,
            "). Every rank must present the token of the process "
            "serving the store: the same DDL_JOB_TOKEN or DDL_JOB_TOKEN_FILE everywhere (node 0's ddlrun prints "
            "one), or under Slurm and Open MPI the same ~/.ddl/secret on every node. A store of another job or "
            "step on this port refuses too");
  DDL_CHECK(status != Status::Timeout, "store: timed out after ", timeout.count(), " ms in ", what,
            " waiting for key(s) ", key_desc, " on ", where,
            " (did every rank start? a rank that crashed before this point never sets its keys)");
  DDL_CHECK(status == Status::Ok, "store: ", what, "(", key_desc, ") rejected by ", where, ": ", payload);
  return payload;
}

void TCPStore::set(const std::string& key, const std::string& value) {
  DDL_CHECK(value.size() <= detail::kMaxValueBytes, "store: value for '", key, "' has ", value.size(),
            " bytes, the limit is ", detail::kMaxValueBytes);
  request(WireWriter().u8(uint8_t(Op::Set)).str(key).str(value).frame(), "set", key, timeout());
}

std::string TCPStore::get(const std::string& key, Millis timeout) {
  return request(WireWriter().u8(uint8_t(Op::Get)).str(key).i64(timeout.count()).frame(), "get", key, timeout);
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  return detail::parse_counter(
      key, request(WireWriter().u8(uint8_t(Op::Add)).str(key).i64(delta).frame(), "add", key, timeout()));
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  WireWriter w;
  w.u8(uint8_t(Op::Check)).u32(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) w.str(k);
  return request(w.frame(), "check", detail::join_keys(keys), timeout()) == "1";
}

void TCPStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  WireWriter w;
  w.u8(uint8_t(Op::Wait)).u32(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) w.str(k);
  w.i64(timeout.count());
  request(w.frame(), "wait", detail::join_keys(keys), timeout);
}

}  // namespace ddl::dist
