// TCPStoreServer's acceptor (see store_server.cpp for the rest): the connections that have
// not yet presented a HELLO, their checks, and the admission of those that pass.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <ddl/dist/launch/munge_auth.h>
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

// Note [Store before authentication]: anyone who reaches the port can connect, so nothing
// a connection costs before its HELLO is checked may grow with what it claims or with how
// many came before it. The acceptor thread holds every such connection in one poll loop:
// no thread of its own, a buffer of at most one HELLO (a longer first frame is dropped as
// soon as its header is read), a deadline (limits.hello_timeout) and a cap
// (limits.max_unauthenticated, the oldest closed first, so a flood cannot lock ranks out
// for longer than the flood lasts). Only a connection that presents the job token gets a
// thread; that thread is joined as soon as the connection ends (not at shutdown), and at
// most limits.max_clients exist. Authenticated connections are not closed when idle (a
// rank may not touch the store for hours), but TCP keepalive closes those whose host is gone.
// Nothing may escape the acceptor thread (that would std::terminate the launcher and the
// job): a client that cannot get a thread is dropped by name, and when the process runs
// out of descriptors (EMFILE) the listener rests for kAcceptPause instead of spinning on it.
struct TCPStoreServer::Pending {
  int fd;
  std::string peer;
  Clock::time_point deadline;
  std::string buf;  // the HELLO frame so far, header included
};

namespace {

constexpr Millis kAcceptPause{100};

// Constant-time comparison, so a token cannot be guessed byte by byte from reply timings.
bool same_token(const std::string& a, const std::string& b) {
  unsigned diff = a.size() != b.size();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) diff |= unsigned(a[i] ^ b[i]);
  return diff == 0;
}

// A reply of a few bytes to a connection that is then closed: best effort, never blocks.
void send_small(int fd, const std::string& m) { (void)::send(fd, m.data(), m.size(), MSG_NOSIGNAL | MSG_DONTWAIT); }

void set_blocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); }

// Dead hosts' connections end after ~2 min of silence instead of holding a thread forever.
void keep_alive(int fd) {
  int on = 1, idle = 60, interval = 10, count = 6;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

std::string TCPStoreServer::token_problem(const std::string& presented) const {
  if (token_.empty()) return "";
  const std::string munge_job = detail::kMungeTokenPrefix, munge_cred = detail::kMungeCredentialPrefix;
  if (token_.rfind(munge_job, 0) == 0) {  // See Note [MUNGE tokens] in dist/launch/munge_auth.cpp
    if (presented.empty()) return "no job token";
    if (presented.rfind(munge_cred, 0) != 0) return "a job token where this store wants a MUNGE credential";
    return detail::munge_check(presented.substr(munge_cred.size()), token_.substr(munge_job.size()));
  }
  if (same_token(presented, token_)) return "";
  return presented.empty() ? "no job token" : "wrong job token";
}

void TCPStoreServer::drop(const std::string& peer, const std::string& why) {
  rejected_++;
  // A flood must not flood the log either.
  const int64_t n = logged_drops_++;
  if (n < 20)
    detail::server_log_line("[ddl store] dropped client " + peer + " (" + why + ")");
  else if (n == 20)
    detail::server_log_line("[ddl store] further dropped clients are counted, not logged");
}

void TCPStoreServer::reap() {
  std::list<Client> ended;
  {
    std::lock_guard<std::mutex> lock(conn_mu_);
    for (auto it = clients_.begin(); it != clients_.end();) {
      auto next = std::next(it);
      if (it->done.load()) ended.splice(ended.end(), clients_, it);
      it = next;
    }
    reaping_ += static_cast<int64_t>(ended.size());  // still counted by clients() until joined
  }
  for (Client& c : ended) {
    c.thread.join();
    close(c.fd);
    --reaping_;
  }
}

void TCPStoreServer::accept_loop() {
  std::vector<Pending> pending;
  std::vector<pollfd> fds;
  while (!stop_) {
    try {
      accept_round(pending, fds);
    } catch (const std::exception& e) {  // bad_alloc, or a system_error from the library
      detail::server_log_line(std::string("[ddl store] acceptor: ") + e.what() + "; going on");
      std::this_thread::sleep_for(Millis(10));
    }
  }
  for (Pending& p : pending) close(p.fd);
  pending_count_ = 0;
}

void TCPStoreServer::accept_round(std::vector<Pending>& pending, std::vector<pollfd>& fds) {
  reap();
  // While out of descriptors the listener is left out of poll (a negative fd is ignored).
  const bool resting = Clock::now() < accept_paused_until_;
  fds.assign(1, pollfd{resting ? -1 : listen_fd_, POLLIN, 0});
  auto wake = Clock::now() + Millis(100);
  for (const Pending& p : pending) {
    fds.push_back(pollfd{p.fd, POLLIN, 0});
    wake = std::min(wake, p.deadline);
  }
  const auto wait_ms = std::chrono::duration_cast<Millis>(wake - Clock::now()).count();
  if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait_ms, 0) + 1)) < 0 && errno != EINTR)
    throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
  // Advance or expire the connections owing a HELLO (fds[i + 1] is pending[i]).
  const auto now = Clock::now();
  size_t kept = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    bool keep = true;
    if (fds[i + 1].revents != 0) {
      keep = advance(p);
    } else if (now >= p.deadline) {
      drop(p.peer, "no HELLO within " + std::to_string(limits_.hello_timeout.count()) + " ms");
      keep = false;
    }
    if (!keep && p.fd >= 0) close(p.fd);
    if (keep && kept++ != i) pending[kept - 1] = std::move(p);
  }
  pending.resize(kept);
  if (fds[0].revents & POLLIN) accept_new(pending);
  pending_count_ = static_cast<int64_t>(pending.size());
}

void TCPStoreServer::accept_new(std::vector<Pending>& pending) {
  for (int n = 0; n < 64; ++n) {  // a bounded batch, so the pending ones are not starved
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
      // The connection stays queued and the listener readable: rest instead of spinning on it.
      if (!fd_exhaustion_logged_)
        detail::server_log_line(std::string("[ddl store] cannot accept connections: ") + std::strerror(errno) +
                                "; retrying every " + std::to_string(kAcceptPause.count()) + " ms (logged once)");
      fd_exhaustion_logged_ = true;
      accept_paused_until_ = Clock::now() + kAcceptPause;
      return;
    }
    if (fd < 0) return;  // EAGAIN, or a connection reset before it was accepted
    if (static_cast<int>(pending.size()) >= limits_.max_unauthenticated) {
      drop(pending.front().peer, "more than " + std::to_string(limits_.max_unauthenticated) +
                                     " connections without a HELLO; closing the oldest");
      close(pending.front().fd);
      pending.erase(pending.begin());
    }
    try {
      pending.push_back(Pending{fd, detail::peer_address(fd), Clock::now() + limits_.hello_timeout, {}});
    } catch (...) {
      close(fd);
      throw;
    }
  }
}

bool TCPStoreServer::advance(Pending& p) {
  try {
    // Never read past the HELLO's own bytes: the header first, then what it announced.
    size_t want = 4;
    if (p.buf.size() >= 4) {
      const uint32_t n = detail::decode_frame_length(p.buf.data());
      if (n > detail::kMaxHelloBytes)
        throw WireError("a first message of " + std::to_string(n) + " bytes; a HELLO has at most " +
                        std::to_string(detail::kMaxHelloBytes));
      want = 4 + n;
    }
    char chunk[512];
    const ssize_t k = ::recv(p.fd, chunk, std::min(sizeof chunk, want - p.buf.size()), 0);
    if (k < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    if (k <= 0) return false;  // gone before saying anything useful: nothing to report
    p.buf.append(chunk, static_cast<size_t>(k));
    if (p.buf.size() == 4) return advance(p);  // checks the announced length at once
    if (p.buf.size() < want) return true;

    WireReader r(p.buf.data() + 4, p.buf.size() - 4);
    if (r.u8() != uint8_t(Op::Hello) || r.u32() != detail::kWireMagic)
      throw WireError("not a ddl store client (bad HELLO)");
    const uint32_t version = r.u32();
    const std::string token = r.str(detail::kMaxKeyBytes);
    const std::string who = r.at_end() ? "" : r.str(detail::kMaxWhoBytes);
    r.finish();
    std::string refusal, log;
    Status status = Status::Error;
    if (version != detail::kWireVersion) {
      refusal = "protocol version mismatch";
      log = "protocol version " + std::to_string(version);
    } else if (const std::string bad = token_problem(token); !bad.empty()) {
      refusal = bad;
      log = "refused: " + refusal;
      status = Status::Refused;
      if (!who.empty()) {  // See Note [Refused ranks]
        const std::string what = who + " (connecting from " + p.peer + ") presented " +
                                 (token.empty()              ? "no job token"
                                  : bad == "wrong job token" ? "a job token that differs from this store's"
                                                             : bad);
        std::lock_guard<std::mutex> lock(refused_mu_);
        if (refused_.empty()) {
          refused_ = what;
          detail::server_log_line("[ddl store] refused " + what + "; failing every rank's waits");
        }
        refused_rank_ = true;
      }
    } else {
      std::lock_guard<std::mutex> lock(conn_mu_);
      if (static_cast<int>(clients_.size()) >= limits_.max_clients) {
        refusal = "the store serves at most " + std::to_string(limits_.max_clients) + " clients";
        log = refusal;
      }
    }
    if (!refusal.empty()) {
      drop(p.peer, log);  // counted before the reply goes out, so a refused client already sees itself counted
      send_small(p.fd, detail::server_reply(status, refusal));
      return false;
    }
    admit(p.fd, p.peer);
    p.fd = -1;  // the client's thread owns it now
    return false;
  } catch (const std::exception& e) {  // a WireError, or no memory for its bytes
    drop(p.peer, e.what());
    return false;
  }
}

void TCPStoreServer::admit(int fd, const std::string& peer) {
  set_blocking(fd);
  keep_alive(fd);
  std::string why;
  {
    std::lock_guard<std::mutex> lock(conn_mu_);
    try {
      Client& c = clients_.emplace_back();
      c.fd = fd;
      try {
        c.thread = std::thread([this, &c, fd, peer] {
          trace::set_os_thread_name("store client");
          serve(fd, peer);
          c.done = true;
        });
        return;
      } catch (...) {
        clients_.pop_back();
        throw;
      }
    } catch (const std::exception& e) {  // no thread (EAGAIN: a thread or memory limit), or no memory
      why = e.what();
    }
  }
  drop(peer, "cannot serve it: " + why);
  send_small(fd, detail::server_reply(Status::Error, "the store cannot serve another client now (" + why + ")"));
  close(fd);
}

}  // namespace ddl::dist
