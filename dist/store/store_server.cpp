// TCPStoreServer (see tcp_store.h): an event loop that admits connections by their HELLO,
// and one thread per admitted connection serving requests with blocking get/wait. The
// client lives in tcp_store.cpp; the wire format in store_wire.h.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <ddl/base/error.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/store_server_io.h>
#include <ddl/dist/store/store_wire.h>
#include <ddl/dist/store/tcp_store.h>
#include <ddl/trace/thread_name.h>

namespace ddl::dist {

using detail::Clock;
using detail::Op;
using detail::Status;
using detail::WireError;
using detail::WireReader;

// Note [Refused ranks]: a rank refused for its job token exits, and without more the other
// ranks would wait out their timeout (minutes) for its keys, saying nothing of tokens. So
// a refusal of a HELLO that names a rank ("rank 1 on host n2", the client's `who`) is kept,
// logged once with the connecting address, and every wait or get in progress or to come,
// and every check() of keys still missing (ranks poll with it), is answered PeerRefused
// with it: each rank fails within a wait slice (100 ms), saying the token is the problem.
// An anonymous connection (a port scanner, another program) is refused without that. The
// price: whoever reaches the port and claims to be a rank can end the job's waits -- a
// denial of service, as a flood of connections already is; it still cannot read or write
// a key.

namespace {

constexpr int kSpareFds = 64;  // left for everything else the process opens

// The soft descriptor limit raised to the hard one (a server needs one per client); returns it.
int64_t raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 1024;
  if (r.rlim_cur < r.rlim_max) {
    rlimit raised = r;
    raised.rlim_cur = r.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  return r.rlim_cur == RLIM_INFINITY ? int64_t(1) << 30 : static_cast<int64_t>(r.rlim_cur);
}

// Reads one frame body of an authenticated client; returns false when `stop` is raised while idle.
bool read_frame(int fd, std::string& body, const std::atomic<bool>& stop) {
  char head[4];
  while (true) {  // poll in slices so a stopping server never waits on an idle client
    pollfd pfd{fd, POLLIN, 0};
    int rc = poll(&pfd, 1, 100);
    if (stop.load()) return false;
    if (rc > 0) break;
  }
  auto deadline = Clock::now() + std::chrono::seconds(30);
  if (!detail::recv_all(fd, head, 4, deadline)) throw WireError("timed out reading a header");
  body.resize(detail::decode_frame_length(head));
  if (!detail::recv_all(fd, body.data(), body.size(), deadline))
    throw WireError("timed out reading a " + std::to_string(body.size()) + "-byte message");
  return true;
}

}  // namespace

TCPStoreServer::TCPStoreServer(const std::string& host, int port, std::string token, TCPStoreLimits limits)
    : token_(std::move(token)), limits_(limits) {
  // An address that does not resolve is not loopback either: say so, not that a token is missing.
  detail::check_resolves(host, port);
  // See Note [Job tokens] in dist/env.cpp: beyond loopback, a store without a token is open to anyone.
  DDL_CHECK(!token_.empty() || detail::is_loopback(host), "store: refusing to serve on ", host, ":", port,
            " without a job token: other machines can reach that address, and anyone who reaches it could join "
            "the job and read or overwrite its keys (the ranks' addresses included). Give every rank the same "
            "token: DDL_JOB_TOKEN=<secret>, or DDL_JOB_TOKEN_FILE=<a file only you can read, chmod 600> "
            "(ddlrun makes one; under Slurm or Open MPI it is derived from ~/.ddl/secret); or serve on "
            "127.0.0.1 when every rank runs on this host");
  DDL_CHECK(limits_.max_unauthenticated > 0 && limits_.max_clients > 0 && limits_.hello_timeout.count() > 0,
            "store: limits must be positive");
  // Each client holds a descriptor: never admit more than the process may open.
  const int64_t fds = raise_fd_limit();
  limits_.max_clients =
      static_cast<int>(std::clamp<int64_t>(fds - kSpareFds - limits_.max_unauthenticated, 1, limits_.max_clients));
  listen_fd_ = detail::tcp_listen(host, port, &port_);
  fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);  // accept_new takes what is there
  acceptor_ = std::thread([this] {
    trace::set_os_thread_name("store");
    accept_loop();
  });
}

TCPStoreServer::~TCPStoreServer() {
  stop_ = true;
  acceptor_.join();  // closes the connections still owing a HELLO
  close(listen_fd_);
  std::list<Client> clients;
  {
    std::lock_guard<std::mutex> lock(conn_mu_);
    for (Client& c : clients_) shutdown(c.fd, SHUT_RDWR);
    clients.swap(clients_);
  }
  for (Client& c : clients) {
    c.thread.join();
    close(c.fd);
  }
}

int64_t TCPStoreServer::clients() const {
  std::lock_guard<std::mutex> lock(conn_mu_);
  return static_cast<int64_t>(clients_.size()) + pending_count_.load() + reaping_.load();
}

bool TCPStoreServer::has_startup_failure() { return !data_.keys_ending_with("/fatal").empty(); }

bool TCPStoreServer::linger(Millis max, Millis at_least) const {
  const auto start = Clock::now(), deadline = start + max;
  while (clients() > 0 || Clock::now() < start + at_least) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(Millis(20));
  }
  return true;
}

std::string TCPStoreServer::refused_peer() const {
  std::lock_guard<std::mutex> lock(refused_mu_);
  return refused_;
}

std::string TCPStoreServer::address() const { return detail::local_address(listen_fd_); }

void TCPStoreServer::serve(int fd, const std::string& peer) {
  std::string body;
  try {
    std::string ok = detail::server_reply(Status::Ok);
    detail::send_all(fd, ok.data(), ok.size());
    while (read_frame(fd, body, stop_)) {
      std::string out = handle(body);
      detail::send_all(fd, out.data(), out.size());
    }
  } catch (const WireError& e) {
    drop(peer, e.what());
  } catch (const std::exception&) {
    // The client went away (closed socket): nothing to report.
  }
  // The fd stays open until the thread is reaped: the destructor may still shut it down.
  shutdown(fd, SHUT_RDWR);
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
    // A client's timeout is at most a year: Clock::now() + a larger one overflows.
    constexpr int64_t kMaxTimeoutMs = int64_t{365} * 24 * 3600 * 1000;
    auto deadline = Clock::now() + Millis(std::min(timeout_ms, kMaxTimeoutMs));
    while (!data_.check(keys)) {
      if (stop_ || refused_rank_ || Clock::now() >= deadline) return false;
      try {
        data_.wait(keys, Millis(100));
      } catch (const Error&) {
      }
    }
    return true;
  };
  auto stopped_or_timeout = [&] {
    if (refused_rank_) return detail::server_reply(Status::PeerRefused, refused_peer());
    return stop_ ? detail::server_reply(Status::Error, "the store server is shutting down")
                 : detail::server_reply(Status::Timeout);
  };
  switch (op) {
    case Op::Set: {
      std::string key = r.str(detail::kMaxKeyBytes);
      std::string value = r.str(detail::kMaxValueBytes);
      r.finish();
      data_.set(key, value);
      return detail::server_reply(Status::Ok);
    }
    case Op::Get: {
      std::string key = r.str(detail::kMaxKeyBytes);
      int64_t timeout_ms = r.i64();
      r.finish();
      if (!wait_keys({key}, timeout_ms)) return stopped_or_timeout();
      return detail::server_reply(Status::Ok, data_.get(key, Millis(0)));
    }
    case Op::Add: {
      std::string key = r.str(detail::kMaxKeyBytes);
      int64_t delta = r.i64();
      r.finish();
      try {
        return detail::server_reply(Status::Ok, std::to_string(data_.add(key, delta)));
      } catch (const Error& e) {
        return detail::server_reply(Status::Error, e.what());
      }
    }
    case Op::Check: {
      auto keys = read_keys();
      r.finish();
      // Ranks poll check() while they wait for others (the Gloo adapter does): see Note [Refused ranks].
      const bool present = data_.check(keys);
      if (!present && refused_rank_) return detail::server_reply(Status::PeerRefused, refused_peer());
      return detail::server_reply(Status::Ok, present ? "1" : "0");
    }
    case Op::Wait: {
      auto keys = read_keys();
      int64_t timeout_ms = r.i64();
      r.finish();
      return wait_keys(keys, timeout_ms) ? detail::server_reply(Status::Ok) : stopped_or_timeout();
    }
    default:
      throw WireError("unknown opcode " + std::to_string(int(op)));
  }
}

}  // namespace ddl::dist
