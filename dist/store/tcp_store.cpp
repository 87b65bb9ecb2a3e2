// The TCPStore client (see tcp_store.h, store_wire.h); the server is in store_server.cpp.
#include <unistd.h>

#include <thread>

#include <ddl/base/error.h>
#include <ddl/dist/launch/munge_auth.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/store_wire.h>
#include <ddl/dist/store/tcp_store.h>

namespace ddl::dist {

namespace {
// How long a rank without a token tries a store beyond loopback (see the constructor).
constexpr Millis kTokenlessConnect{2000};
}  // namespace

using detail::Op;
using detail::Status;
using detail::WireError;
using detail::WireReader;
using detail::WireWriter;

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
  if (opts.deadline != detail::Clock::time_point{}) set_deadline(opts.deadline);
  // A connection closed before the HELLO's reply was evicted by a flood of connections that
  // never say HELLO (Note [Store before authentication] in store_server.cpp): connect again
  // until the deadline, so a flood locks a rank out no longer than it lasts.
  const auto deadline = detail::Clock::now() + bounded(opts.timeout);
  const std::string who = opts.who.substr(0, detail::kMaxWhoBytes);
  // A MUNGE job token asks for a fresh credential per connection (one decodes only once).
  const std::string munge_job = detail::kMungeTokenPrefix;
  const bool munge = opts.token.rfind(munge_job, 0) == 0;
  auto hello = [&] {
    const std::string token =
        munge ? detail::kMungeCredentialPrefix + detail::munge_credential(opts.token.substr(munge_job.size()))
              : opts.token;
    return WireWriter()
        .u8(uint8_t(Op::Hello))
        .u32(detail::kWireMagic)
        .u32(detail::kWireVersion)
        .str(token)
        .str(who)
        .frame();
  };
  const std::string where = host_ + ":" + std::to_string(port_);
  // No token, a store beyond loopback: no server may serve there without one, so only a
  // server with a token can answer (and refuse this rank, failing the others' waits). Try
  // briefly for that, then say what is missing instead of waiting out the timeout.
  const bool tokenless = !server_ && opts.token.empty() && !detail::is_loopback(host_);
  if (tokenless) detail::check_resolves(host_, port_);  // a bad address is no token problem
  const auto connect_by = tokenless ? std::min(deadline, detail::Clock::now() + kTokenlessConnect) : deadline;
  for (Millis pause(10);; pause = std::min(pause * 2, Millis(500))) {
    try {
      fd_ = detail::tcp_connect(host_, port_, connect_by);
    } catch (const std::exception& e) {
      DDL_CHECK(!tokenless, "store: this rank has no job token, and the store at ", where,
                " is beyond loopback, where a store serves only ranks that present one (", e.what(),
                "). Give every rank the same DDL_JOB_TOKEN, or DDL_JOB_TOKEN_FILE (a chmod 600 file); under "
                "torchrun, Slurm, Open MPI or Kubernetes see docs/dist.md, \"Launchers and the job token\"");
      throw;
    }
    std::string body;
    try {
      body = exchange(hello(), deadline);
    } catch (const std::exception& e) {
      if (fd_ >= 0) close(fd_);
      fd_ = -1;
      DDL_CHECK(detail::Clock::now() + pause < deadline, "store: connect(", where, ") on store ", where,
                " failed: ", e.what(), " (no answer to this rank's HELLO by the rendezvous deadline, ",
                opts.timeout.count(), " ms: the store stalled, or kept closing the connection before its reply)");
      std::this_thread::sleep_for(pause);
      continue;
    }
    try {
      check_reply(body, "connect", where, opts.timeout);
    } catch (...) {
      if (fd_ >= 0) close(fd_);
      fd_ = -1;
      throw;
    }
    return;
  }
}

TCPStore::~TCPStore() {
  if (fd_ >= 0) close(fd_);
  server_.reset();
}

std::string TCPStore::local_ip() const { return detail::local_ip(fd_); }

std::string TCPStore::exchange(const std::string& frame, detail::Clock::time_point deadline) {
  detail::send_all(fd_, frame.data(), frame.size());
  char head[4];
  std::string body;
  bool ok = detail::recv_all(fd_, head, 4, deadline);
  if (ok) {
    body.resize(detail::decode_frame_length(head));
    ok = detail::recv_all(fd_, body.data(), body.size(), deadline);
  }
  DDL_CHECK(ok, "no reply by the deadline");
  return body;
}

std::string TCPStore::request(const std::string& frame, const char* what, const std::string& key_desc, Millis timeout,
                              bool server_waits) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string where = "store " + host_ + ":" + std::to_string(port_);
  DDL_CHECK(fd_ >= 0, "store: ", what, "(", key_desc, "): the connection to ", where,
            " was lost after an earlier error: ", lost_);
  // The server answers a timed wait itself by `timeout`; the margin only catches a stalled
  // server, and stays short so that it does not stretch the job's timeout (it was 10 s).
  // Other requests are answered at once: a short floor lets one still report an error to
  // the other ranks once the rendezvous deadline has passed.
  const Millis bound =
      server_waits ? timeout + Millis(1000) : std::max(timeout, std::min(this->timeout(), Millis(1000)));
  std::string body;
  try {
    body = exchange(frame, detail::Clock::now() + bound);
  } catch (const std::exception& e) {
    close(fd_);
    fd_ = -1;
    lost_ = std::string(what) + "(" + key_desc + ") failed: " + e.what() + " (after " + std::to_string(bound.count()) +
            " ms)";
    DDL_CHECK(false, "store: ", what, "(", key_desc, ") on ", where, " failed: ", e.what(), " (no reply within ",
              bound.count(), " ms: is the store's process stalled?)");
  }
  return check_reply(body, what, key_desc, timeout);
}

std::string TCPStore::check_reply(const std::string& body, const char* what, const std::string& key_desc,
                                  Millis timeout) {
  const std::string where = "store " + host_ + ":" + std::to_string(port_);
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
            "one), or under Slurm and Open MPI the same ~/.ddl/secret on every node (nodes without a shared home "
            "directory each make their own: export DDL_JOB_TOKEN in the batch script instead). A store of another "
            "job or step on this port refuses too. docs/dist.md, \"Launchers and the job token\", says what to "
            "set for each launcher");
  DDL_CHECK(status != Status::PeerRefused, "store: ", what, "(", key_desc, ") on ", where,
            " ended: the job cannot start because the store refused a rank's job token: ", payload,
            ". Every rank must present the same token (DDL_JOB_TOKEN or DDL_JOB_TOKEN_FILE; docs/dist.md, "
            "\"Launchers and the job token\")");
  DDL_CHECK(status != Status::Timeout, "store: timed out after ", timeout.count(), " ms in ", what,
            " waiting for key(s) ", key_desc, " on ", where,
            " (did every rank start? a rank that crashed before this point never sets its keys)");
  DDL_CHECK(status == Status::Ok, "store: ", what, "(", key_desc, ") rejected by ", where, ": ", payload);
  return payload;
}

void TCPStore::set(const std::string& key, const std::string& value) {
  DDL_CHECK(value.size() <= detail::kMaxValueBytes, "store: value for '", key, "' has ", value.size(),
            " bytes, the limit is ", detail::kMaxValueBytes);
  request(WireWriter().u8(uint8_t(Op::Set)).str(key).str(value).frame(), "set", key, bounded(timeout()), false);
}

std::string TCPStore::get(const std::string& key, Millis timeout) {
  timeout = bounded(timeout);
  return request(WireWriter().u8(uint8_t(Op::Get)).str(key).i64(timeout.count()).frame(), "get", key, timeout, true);
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  return detail::parse_counter(key, request(WireWriter().u8(uint8_t(Op::Add)).str(key).i64(delta).frame(), "add", key,
                                            bounded(timeout()), false));
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  WireWriter w;
  w.u8(uint8_t(Op::Check)).u32(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) w.str(k);
  return request(w.frame(), "check", detail::join_keys(keys), bounded(timeout()), false) == "1";
}

void TCPStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  timeout = bounded(timeout);
  WireWriter w;
  w.u8(uint8_t(Op::Wait)).u32(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) w.str(k);
  w.i64(timeout.count());
  request(w.frame(), "wait", detail::join_keys(keys), timeout, true);
}

}  // namespace ddl::dist
