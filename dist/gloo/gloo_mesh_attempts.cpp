// connect_mesh (gloo_mesh.h): Gloo's full mesh formed in attempts, each on fresh ports and
// its own store keys, every pair checked by a handshake; an attempt a stray connection
// broke is torn down on every rank and the mesh built again, until the deadline. The
// pieces one attempt uses (addresses, notes, interface checks) are in gloo_mesh.cpp.
#include <gloo/common/error.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <net/if.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <iostream>
#include <random>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/dist/gloo/gloo_collectives.h>
#include <ddl/dist/gloo/gloo_mesh.h>
#include <ddl/dist/store/file_store.h>
#include <ddl/dist/store/tcp_store.h>
#include <ddl/dist/store/torch_store.h>
#include <ddl/trace/thread_name.h>

namespace ddl::dist::detail {

namespace {
using Clock = std::chrono::steady_clock;

// Note [Mesh attempts]: Gloo cannot be told to refuse a connection (Note [Stray
// connections]), so ddl makes the mesh in attempts it can throw away. Attempt a keeps its
// keys under "mesh/<a>/" (Gloo's addresses included, so its ports are fresh) and goes:
//   1. connectFullMesh, on a thread of its own (Gloo's connect waits for its own timeout);
//   2. every rank sets "connected/<rank>", or "failed/<rank>" and "failed" with why when
//      its connect was refused or reset (a stray took its place at the peer);
//   3. once all have connected, a handshake over every pair: each rank sends each peer
//      {magic, rank, attempt, the job's nonce} and checks what comes back within a short
//      bound, so a pair whose other end is a stray (silent, or sending bytes Gloo ignores)
//      fails here instead of in the first collective; then "verified/<rank>", or "failed".
// The first "failed" ends the attempt on every rank: waits poll for it, and the attempt's
// store refuses every further call, which ends a Gloo store wait still running on the
// attempt's thread (a pair connect still waiting there ends at Gloo's timeout, and only
// holds that attempt's ports). Then all ranks start attempt a + 1. A fatal start-up error
// (kFatalKey, not per attempt) and the overall deadline end every attempt as before.
constexpr const char* kNonceKey = "mesh/nonce";
constexpr uint64_t kHandshakeSlot = 0x6464'6c6d'6573'6831ull;  // "ddlmesh1": a fresh context, no other ops yet
constexpr char kMagic[8] = {'d', 'd', 'l', 'm', 'e', 's', 'h', '1'};

struct HandshakeRecord {
  char magic[8];
  int32_t rank;
  int32_t attempt;
  uint64_t nonce;
};

Millis remaining(Clock::time_point deadline) {
  return std::max(Millis(0), std::chrono::duration_cast<Millis>(deadline - Clock::now()));
}

// One attempt's keys ("mesh/<a>/<key>") inside the group's store; the fatal key stays
// shared. Once abandoned, every call throws, so nothing waits on a dead attempt.
class AttemptStore final : public Store {
 public:
  using Store::get;
  using Store::wait;
  AttemptStore(std::shared_ptr<Store> base, int attempt)
      : Store(base->timeout()), base_(std::move(base)), prefix_("mesh/" + std::to_string(attempt) + "/") {}
  void set(const std::string& k, const std::string& v) override { base_->set(key(k), v); }
  std::string get(const std::string& k, Millis t) override { return base_->get(key(k), t); }
  int64_t add(const std::string& k, int64_t d) override { return base_->add(key(k), d); }
  bool check(const std::vector<std::string>& ks) override { return base_->check(keys(ks)); }
  void wait(const std::vector<std::string>& ks, Millis t) override { base_->wait(keys(ks), t); }
  void abandon() { abandoned_ = true; }

 private:
  std::string key(const std::string& k) const {
    DDL_CHECK(!abandoned_, "rendezvous: this mesh attempt was abandoned (another rank saw it fail)");
    return k == GlooStoreAdapter::kFatalKey ? k : prefix_ + k;
  }
  std::vector<std::string> keys(const std::vector<std::string>& ks) const {
    std::vector<std::string> out;
    for (const auto& k : ks) out.push_back(key(k));
    return out;
  }
  std::shared_ptr<Store> base_;
  std::string prefix_;
  std::atomic<bool> abandoned_{false};
};

struct Attempt {
  std::shared_ptr<MeshContext> ctx;  // set when the mesh formed and every pair was verified
  std::string failure;               // else why not (what the first failing rank said)
  std::vector<std::string> strays;   // "rank r's port: ip:port" this rank found in a peer's place
};

// Each failing rank's reason stays under "failed/<rank>": more than one rank can fail at
// once, each on another rank's port, and "failed" keeps one of them (note_strays).
void fail_attempt(AttemptStore& s, int rank, const std::string& why) {
  s.set("failed/" + std::to_string(rank), why);
  if (!s.check({"failed"})) s.set("failed", why);
}

// Throws PeerStartupError when some rank reported a fatal start-up error.
void check_fatal(Store& base) {
  if (base.check({GlooStoreAdapter::kFatalKey})) throw PeerStartupError(base.get(GlooStoreAdapter::kFatalKey));
}

[[noreturn]] void timed_out(int size, Millis op_timeout, const std::string& detail) {
  DDL_CHECK(false, "could not connect to the other ", size - 1, " rank(s) within ", op_timeout.count(),
            " ms: ", detail);
}

// Waits until every rank has set `step`/<r> in this attempt (true), or one set "failed" (false).
bool all_reached(AttemptStore& s, Store& base, const std::string& step, int size, Clock::time_point deadline,
                 Millis op_timeout) {
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back(step + "/" + std::to_string(r));
  auto pause = Millis(1);
  while (!s.check(keys)) {
    if (s.check({"failed"})) return false;
    check_fatal(base);
    if (Clock::now() >= deadline) {
      std::string missing;
      for (int r = 0; r < size; ++r)
        if (!s.check({keys[r]})) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      timed_out(size, op_timeout,
                "rank " + missing + " did not finish " + (step == "connected" ? "connecting" : "the pair handshake") +
                    " (still waiting for a peer, or gone?)");
    }
    std::this_thread::sleep_for(std::min(pause, remaining(deadline)));
    pause = std::min(pause * 2, Millis(50));
  }
  return true;
}

// Whether Gloo's connect failed in a way a stray causes: the peer's port refused this rank
// (the stray took it) or dropped it (this rank was queued behind the stray).
bool stray_symptom(const std::string& what) {
  for (const char* s : {"Connection refused", "Connection reset", "Connection closed by peer"})
    if (what.find(s) != std::string::npos) return true;
  return false;
}

// The handshake of Note [Mesh attempts], step 3. Returns "" or what went wrong, naming the
// peer; `strays` gets the remote end of a connection this rank accepted (on the port it
// published in `s`) whose record never came or was wrong.
std::string handshake(MeshContext& ctx, Store& s, int attempt, uint64_t nonce, Millis bound,
                      std::vector<std::string>* strays) {
  const int n = ctx.size, me = ctx.rank;
  std::vector<HandshakeRecord> out(n), in(n);
  for (auto& r : out) {
    std::memcpy(r.magic, kMagic, sizeof kMagic);
    r.rank = me;
    r.attempt = attempt;
    r.nonce = nonce;
  }
  std::memset(in.data(), 0, in.size() * sizeof(HandshakeRecord));
  std::string error;
  {
    auto send_buf = ctx.createUnboundBuffer(out.data(), out.size() * sizeof(HandshakeRecord));
    auto recv_buf = ctx.createUnboundBuffer(in.data(), in.size() * sizeof(HandshakeRecord));
    const auto until = Clock::now() + bound;
    try {
      for (int r = 0; r < n; ++r)
        if (r != me) recv_buf->recv(r, kHandshakeSlot, r * sizeof(HandshakeRecord), sizeof(HandshakeRecord));
      for (int r = 0; r < n; ++r)
        if (r != me) send_buf->send(r, kHandshakeSlot, r * sizeof(HandshakeRecord), sizeof(HandshakeRecord));
      // Gloo keeps only the latest completion's source rank: count completions, then read
      // the records (a slot no peer wrote still holds zeros).
      for (int k = 0; k < n - 1; ++k) recv_buf->waitRecv(std::max(Millis(1), remaining(until)));
      for (int k = 0; k < n - 1; ++k) send_buf->waitSend(std::max(Millis(1), remaining(until)));
    } catch (const std::exception& e) {
      error = e.what();
    }
  }  // buffers go before the context does anything else
  std::string bad;
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    const HandshakeRecord& h = in[r];
    const bool empty = std::all_of(reinterpret_cast<const char*>(&h), reinterpret_cast<const char*>(&h + 1),
                                   [](char c) { return c == 0; });
    const bool valid =
        std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.rank == r && h.attempt == attempt && h.nonce == nonce;
    if (valid) continue;
    // Only the listening side can tell: the connecting side's remote end is the peer's port.
    const auto mine = published_for(s, me, r, n);
    const auto& local = static_cast<const gloo::transport::tcp::Address&>(ctx.getPair(r)->address());
    const std::string from = mine && mine->str() == local.str() ? remote_end_at(local.getSockaddr()) : "";
    bad += (bad.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + "'s connection" +
           (from.empty() ? "" : " (from " + from + ")") +
           (!empty ? " sent something other than ddl's handshake"
                   : " sent no handshake within " + std::to_string(bound.count()) + " ms");
    if (!from.empty())
      strays->push_back("rank " + std::to_string(r) + "'s place: " + from + " (it sent no ddl handshake)");
  }
  if (bad.empty() && !error.empty()) bad = error;
  return bad.empty() ? "" : "rank " + std::to_string(me) + ": " + bad + (error.empty() ? "" : " (gloo: " + error + ")");
}

// Gloo's connect ran into the deadline: waiting for a rank's address, or for connections.
[[noreturn]] void connect_timed_out(AttemptStore& s, const GlooStoreAdapter& adapter, int size, Millis op_timeout) {
  const std::string waiting = ranks_in(adapter.waiting_for());
  s.abandon();
  timed_out(size, op_timeout,
            waiting.empty() ? "the connections to the addresses they published did not open (a firewall, an "
                              "address other hosts cannot reach, or ranks of another job?)"
                            : "still waiting for rank " + waiting +
                                  " to publish its address in the store (not started yet, or using another job's "
                                  "store?)");
}

// When the attempt failed because a peer was refused (or reset) on a port this rank
// published: who took its place here (the pairs' sockets stay open while `ctx` lives).
// Every rank's reason is read, not only the one "failed" kept: ranks 0 and 2 of three can
// both fail, each refused by a stray at another rank, and "failed" names one of them. Any
// rank's reason is stored before "failed" is, so the first one is there once "failed" is.
void note_strays(const MeshContext& ctx, Store& s, Attempt* a) {
  std::vector<std::string> reasons{a->failure};
  for (int r = 0; r < ctx.size; ++r)
    if (s.check({"failed/" + std::to_string(r)})) reasons.push_back(s.get("failed/" + std::to_string(r), Millis(0)));
  for (const auto& reason : reasons)
    for (const auto& [peer, from] : ctx.strays_behind(s, reason)) {
      const std::string place = "rank " + std::to_string(peer) + "'s place: " + from;
      if (std::find(a->strays.begin(), a->strays.end(), place) == a->strays.end()) a->strays.push_back(place);
    }
}

// " at host:port" for the store under `s`'s prefixes, for errors about what it returned.
std::string store_where(const Store* s) {
  while (const auto* p = dynamic_cast<const PrefixStore*>(s)) s = p->base().get();
  if (const auto* t = dynamic_cast<const TCPStore*>(s)) return " at " + t->host() + ":" + std::to_string(t->port());
  if (const auto* t = dynamic_cast<const TorchStore*>(s))
    return " (PyTorch TCPStore) at " + t->host() + ":" + std::to_string(t->port());
  if (const auto* f = dynamic_cast<const FileStore*>(s)) return " in " + f->dir();
  return "";
}

Attempt try_once(const std::shared_ptr<Store>& base, int attempt, int rank, int size,
                 const gloo::transport::tcp::attr& attr, Millis op_timeout, Clock::time_point deadline,
                 const std::string& where) {
  auto s = std::make_shared<AttemptStore>(base, attempt);
  struct Abandon {  // however this attempt ends, calls still running on its store stop
    std::shared_ptr<AttemptStore> s;
    ~Abandon() { s->abandon(); }
  };
  Attempt a;
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    DDL_CHECK(false, "cannot listen on ", where, " (this host's interfaces: ", describe_interfaces(), "): ", e.what());
  }
  auto ctx = std::make_shared<MeshContext>(rank, size);
  ctx->setTimeout(op_timeout);
  auto adapter = std::make_shared<GlooStoreAdapter>(s, deadline);
  adapter->expect_addresses(size, store_where(base.get()));
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> connected = done->get_future();
  // A thread of its own, so this rank stops waiting at the deadline or when the attempt
  // fails elsewhere, even where Gloo's pair connect would wait for its own timeout. The
  // thread holds what it uses and ends by itself on Gloo's timeout at the latest.
  std::thread([ctx, adapter, device, done]() mutable {
    trace::set_os_thread_name("gloo connect");
    try {
      ctx->connectFullMesh(*adapter, device);
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  }).detach();
  while (connected.wait_for(Millis(20)) != std::future_status::ready) {
    check_fatal(*base);
    if (s->check({"failed"})) {
      a.failure = s->get("failed", Millis(0));
      note_strays(*ctx, *s, &a);
      s->abandon();
      return a;
    }
    if (Clock::now() >= deadline) connect_timed_out(*s, *adapter, size, op_timeout);
  }
  Abandon abandon_on_exit{s};
  try {
    connected.get();
  } catch (const PeerStartupError&) {
    throw;
  } catch (const std::exception& e) {
    if (Clock::now() >= deadline) connect_timed_out(*s, *adapter, size, op_timeout);
    const std::string what = e.what();
    // Not what a stray does (an unreachable address, a family mismatch): retrying cannot help.
    DDL_CHECK(stray_symptom(what), "connecting to the other ranks failed at once: ", what,
              refused_note(*s, rank, size, what));
    fail_attempt(*s, rank,
                 "rank " + std::to_string(rank) + " could not connect: " + what + refused_note(*s, rank, size, what));
    a.failure = s->get("failed", Millis(0));
    note_strays(*ctx, *s, &a);
    return a;
  }
  s->set("connected/" + std::to_string(rank), "1");
  if (!all_reached(*s, *base, "connected", size, deadline, op_timeout)) {
    a.failure = s->get("failed", Millis(0));
    note_strays(*ctx, *s, &a);
    return a;
  }
  const uint64_t nonce = std::stoull(base->get(kNonceKey, std::max(Millis(1), remaining(deadline))));
  const Millis bound = std::min(remaining(deadline), std::clamp(op_timeout / 5, Millis(1000), Millis(5000)));
  if (const std::string bad = handshake(*ctx, *s, attempt, nonce, bound, &a.strays); !bad.empty()) {
    fail_attempt(*s, rank, bad);
    a.failure = s->get("failed", Millis(0));
    return a;
  }
  s->set("verified/" + std::to_string(rank), "1");
  if (!all_reached(*s, *base, "verified", size, deadline, op_timeout)) {
    a.failure = s->get("failed", Millis(0));
    return a;
  }
  ctx->exchange_addresses(s, deadline);
  a.ctx = ctx;
  return a;
}

std::shared_ptr<MeshContext> connect(const std::shared_ptr<Store>& store, int rank, int size,
                                     const gloo::transport::tcp::attr& attr, Millis op_timeout,
                                     Clock::time_point deadline, const std::string& where,
                                     const std::string& log_prefix) {
  DDL_CHECK(attr.iface.empty() || if_nametoindex(attr.iface.c_str()) != 0, "network interface '", attr.iface,
            "' (DDL_GLOO_IFACE or GLOO_SOCKET_IFNAME) does not exist on this host; its interfaces are: ",
            describe_interfaces());
  // The job's nonce for the handshake, what a stray cannot know: read once all ranks have
  // connected (rank 0 among them, so it is there).
  if (rank == 0 && !store->check({kNonceKey})) store->set(kNonceKey, std::to_string(std::random_device{}()));
  std::vector<std::string> strays, failures;
  for (int attempt = 0;; ++attempt) {
    Attempt a;
    try {
      a = try_once(store, attempt, rank, size, attr, op_timeout, deadline, where);
    } catch (const PeerStartupError&) {
      throw;
    } catch (const std::exception& e) {
      // Out of time: say what broke the attempts before, if any did.
      DDL_CHECK(failures.empty(), e.what(), "; ", failures.size(),
                " earlier attempt(s) to form the mesh failed, the last: ", failures.back(),
                strays.empty() ? "" : "; connections not from a rank took ranks' places (" + strays.front() + ")");
      throw;
    }
    if (a.ctx) return a.ctx;
    failures.push_back(a.failure);
    if (!a.strays.empty()) {
      // Once per rendezvous: later attempts' strays are summed up if the last one fails too.
      if (strays.empty())
        std::cerr << log_prefix << " ProcessGroupGloo: warning: a connection not from a rank of this job took "
                  << a.strays.front()
                  << " (Gloo accepts the first connection on a port without a handshake: Note [Stray connections] "
                     "in dist/gloo/gloo_mesh.cpp); every rank rebuilds the mesh on new ports\n"
                  << std::flush;
      strays.insert(strays.end(), a.strays.begin(), a.strays.end());
    }
    if (Clock::now() >= deadline)
      timed_out(
          size, op_timeout,
          std::to_string(failures.size()) + " attempt(s) to form the mesh failed, the last: " + a.failure +
              (strays.empty() ? "" : "; connections not from a rank took ranks' places (" + strays.front() + ")"));
  }
}

}  // namespace

std::shared_ptr<MeshContext> connect_mesh(const std::shared_ptr<Store>& store, int rank, int size,
                                          const gloo::transport::tcp::attr& attr, Millis op_timeout,
                                          Clock::time_point deadline, const std::string& log_prefix) {
  const std::string where = attr.iface.empty() ? "address " + attr.hostname : "interface " + attr.iface;
  try {
    return connect(store, rank, size, attr, op_timeout, deadline, where, log_prefix);
  } catch (const PeerStartupError& e) {
    throw Error(log_prefix + " ProcessGroupGloo: stopping, another rank could not start: " + e.what());
  } catch (const std::exception& e) {
    const std::string msg = log_prefix + " ProcessGroupGloo (" + where + "): " + e.what();
    report_startup_failure(*store, msg);
    throw Error(msg);
  }
}

}  // namespace ddl::dist::detail
