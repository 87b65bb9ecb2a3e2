// ProcessGroupGloo's machinery: rendezvous, the collective worker thread, the p2p completion
// thread, DDL_DEBUG checks, error reporting and the broken state (see process_group_gloo.h).
#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <cctype>
#include <cstdlib>
#include <sstream>

#include "dist/debug_check.h"
#include "dist/gloo_collectives.h"
#include "dist/process_group_gloo.h"
#include "dist/shm_all_reduce.h"
#include "tensor/error.h"

namespace ddl::dist {

using detail::GlooCall;
using detail::Traffic;

namespace {
// Gloo's timeouts say "Timed out waiting ..."; everything else is a broken connection.
bool is_timeout(const std::exception& e) { return std::string(e.what()).find("imed out") != std::string::npos; }

// -1: the variable decides (unset or empty: `unset_means`); otherwise the option does.
bool option_or_env(int option, const char* var, bool unset_means) {
  if (option >= 0) return option > 0;
  const char* v = std::getenv(var);
  if (!v || !*v) return unset_means;
  return std::string(v) != "0";
}

// Note [Naming the failed peer]: Gloo's TCP errors quote the address of the peer whose
// connection broke ("Read error [10.0.0.2]:41234: Connection reset by peer"). Depending on
// which side opened the connection, that is the peer's listening address (published in
// Gloo's rendezvous: store key "<rank>", one entry per peer) or the peer's end of the
// connection (often an ephemeral port only the peer knows). So after connecting, every
// rank publishes the local end of each of its connections too; with both, an address in
// an error maps to its rank. Timeouts ("Timed out waiting 1000ms for recv operation")
// quote no address: the message then names the ranks the operation talks to.
class MeshContext final : public gloo::rendezvous::Context {
 public:
  using gloo::rendezvous::Context::Context;
  std::vector<std::vector<std::string>> peer_addresses;  // per rank, "[ip]:port"s; none for this rank

  // Best effort: the names are a diagnostic, so what cannot be read is left out.
  void exchange_addresses(Store& store, Millis timeout) {
    peer_addresses.assign(size, {});
    if (size < 2) return;
    std::string mine;
    for (int r = 0; r < size; ++r) mine += (r == rank ? "" : getPair(r)->address().str()) + "\n";
    try {
      store.set("pair_addresses/" + std::to_string(rank), mine);
      for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        // Rank r's rendezvous entry for this rank (entries in rank order, skipping r).
        const std::string all = store.get(std::to_string(r), timeout);
        const size_t entry = all.size() / (size - 1), k = rank < r ? rank : rank - 1;
        if (entry > 0 && entry <= gloo::transport::Address::kMaxByteSize)
          peer_addresses[r].push_back(gloo::transport::tcp::Address(
              std::vector<char>(all.begin() + k * entry, all.begin() + (k + 1) * entry)).str());
        // Rank r's end of its connection to this rank.
        std::istringstream lines(store.get("pair_addresses/" + std::to_string(r), timeout));
        std::string line;
        for (int j = 0; j <= rank && std::getline(lines, line); ++j)
          if (j == rank && !line.empty()) peer_addresses[r].push_back(line);
      }
    } catch (const std::exception&) {
    }
  }

  // The rank one of whose addresses `what` quotes (and that address), or -1.
  int peer_in_message(const std::string& what, std::string* address) const {
    for (int r = 0; r < static_cast<int>(peer_addresses.size()); ++r)
      for (const std::string& a : peer_addresses[r])
        // "[127.0.0.1]:4087" must not match the start of "[127.0.0.1]:40873".
        for (size_t pos = what.find(a); pos != std::string::npos; pos = what.find(a, pos + 1))
          if (pos + a.size() == what.size() || !std::isdigit(static_cast<unsigned char>(what[pos + a.size()]))) {
            *address = a;
            return r;
          }
    return -1;
  }
};
}  // namespace

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size,
                                   GlooOptions opts)
    : ProcessGroup(rank, size), opts_(std::move(opts)) {
  debug_ = option_or_env(opts_.debug, "DDL_DEBUG", false);
  gloo::transport::tcp::attr attr;
  if (!opts_.iface.empty())
    attr.iface = opts_.iface;
  else
    attr.hostname = opts_.hostname.empty() ? "127.0.0.1" : opts_.hostname;
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<MeshContext>(rank, size);
    ctx->setTimeout(opts_.timeout);
    detail::GlooStoreAdapter adapter(store);
    ctx->connectFullMesh(adapter, device);
    ctx->exchange_addresses(*store, opts_.timeout);
    ctx_ = ctx;
  } catch (const std::exception& e) {
    DDL_CHECK(false, log_prefix(), " ProcessGroupGloo: could not connect to the other ", size - 1,
              " rank(s) within ", opts_.timeout.count(), " ms (this rank's address: ",
              opts_.iface.empty() ? attr.hostname : "interface " + opts_.iface, "): ", e.what());
  }
  if (size > 1) {
    try {
      shm_ = detail::ShmAllReduce::connect(*store, rank, size, option_or_env(opts_.shm, "DDL_SHM", true),
                                           opts_.timeout, &shm_status_);
    } catch (const std::exception& e) {  // a rank missed the store exchange
      DDL_CHECK(false, log_prefix(), " ProcessGroupGloo: setting up the shared-memory all-reduce: ", e.what());
    }
  }
  worker_ = std::thread([this] { worker_loop(); });
  p2p_worker_ = std::thread([this] { p2p_loop(); });
}

ProcessGroupGloo::~ProcessGroupGloo() {
  std::deque<Task> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    dropped.swap(queue_);
    // A recv whose send never comes would otherwise hold the p2p thread until its timeout.
    if (p2p_current_) {
      p2p_current_->abortWaitRecv();
      p2p_current_->abortWaitSend();
    }
  }
  cv_.notify_all();
  for (auto& t : dropped)
    t.work->finish(std::make_exception_ptr(
        Error(log_prefix() + " " + t.desc + ": the process group was destroyed first")));
  worker_.join();  // a running collective ends by its own timeout at the latest
  p2p_worker_.join();
}

std::shared_ptr<Work> ProcessGroupGloo::enqueue(OpKind kind, std::string desc,
                                                std::string fingerprint, std::string peers,
                                                RunFn run) {
  check_usable(desc);
  auto work = std::make_shared<Work>(desc);
  {
    std::lock_guard<std::mutex> lock(mu_);
    DDL_CHECK(!stop_, desc, ": the process group is shutting down");
    queue_.push_back(Task{kind, std::move(desc), std::move(fingerprint), std::move(peers),
                          std::move(run), work});
  }
  cv_.notify_all();
  return work;
}

void ProcessGroupGloo::worker_loop() {
  while (true) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    execute(task);
  }
}

void ProcessGroupGloo::execute(Task& task) {
  // Tags advance identically on every rank (same collectives, same order): one for the
  // DDL_DEBUG exchange, one for the collective.
  GlooCall call{ctx_, 0, opts_.timeout, shm_.get()};
  try {
    check_usable(task.desc);
    if (debug_) {
      call.tag = seq_++;
      debug_check(task, call);
    }
    call.tag = seq_++;
    Traffic traffic = task.run(call);
    count(task.kind, traffic);
    task.work->finish();
  } catch (const ddl::Error&) {
    // Argument, DDL_DEBUG or broken-group errors: the message already says everything.
    task.work->finish(std::current_exception());
  } catch (const std::exception& e) {
    // Gloo's IoException (peer gone, timeout) or an enforce failure mid-transfer: the
    // connections are in an unknown state, so the whole group is unusable from here on.
    const bool timed_out = is_timeout(e);
    const bool via_shm = dynamic_cast<const detail::ShmError*>(&e) != nullptr;
    const auto& mesh = static_cast<const MeshContext&>(*ctx_);  // the constructor made it one
    std::string address;
    const int peer = via_shm ? -1 : mesh.peer_in_message(e.what(), &address);
    std::string msg = log_prefix() + " " + task.desc;
    if (peer >= 0)  // See Note [Naming the failed peer]
      msg += " failed: the connection to rank " + std::to_string(peer) + " (" + address +
             ") broke: that rank exited, or closed its connections after a failure of its own";
    else
      msg += " failed while talking to " + task.peers +
             (timed_out ? ": a peer did not respond within " + std::to_string(opts_.timeout.count()) + " ms"
                        : ": a peer failed or closed its connection");
    msg += (via_shm ? " (" : " (gloo: ") + std::string(e.what()) + ")";
    mark_broken(msg);
    task.work->finish(std::make_exception_ptr(Error(msg)));
  }
}

// Note [DDL_DEBUG check]: before each collective every rank contributes a 256-byte record
// "#seq op(dtype x numel, args)" to a small all-gather. Identical records mean all ranks
// agree; otherwise every rank raises the same error naming each rank's call, instead of
// running mismatched collectives that hang or silently corrupt data.
void ProcessGroupGloo::debug_check(const Task& task, const GlooCall& call) {
  const std::string mine = detail::debug_record(call.tag, task.fingerprint);
  Traffic traffic;
  std::vector<std::string> all;
  try {
    all = detail::gloo_exchange_records(call, mine, &traffic);
  } catch (const std::exception& e) {
    std::string msg = log_prefix() + " DDL_DEBUG: the check before " + task.desc +
                      " failed: not every rank reached a collective within " +
                      std::to_string(opts_.timeout.count()) + " ms (gloo: " + e.what() + ")";
    mark_broken(msg);
    throw Error(msg);
  }
  count(OpKind::DebugCheck, traffic);
  const std::string msg = detail::debug_mismatch_message(log_prefix(), all);
  if (!msg.empty()) throw Error(msg);
}

void ProcessGroupGloo::p2p_loop() {
  while (true) {
    P2P p;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !p2p_queue_.empty(); });
      if (p2p_queue_.empty()) return;
      p = std::move(p2p_queue_.front());
      p2p_queue_.pop_front();
      p2p_current_ = stop_ ? nullptr : p.buffer.get();
    }
    const bool is_send = p.kind == OpKind::Send;
    // p's buffer dies with this iteration: clear p2p_current_ however the wait ends (a
    // timeout throws), or the destructor would abort a freed buffer.
    struct ClearCurrent {
      ProcessGroupGloo& pg;
      ~ClearCurrent() {
        std::lock_guard<std::mutex> lock(pg.mu_);
        pg.p2p_current_ = nullptr;
      }
    };
    try {
      bool done;
      {
        ClearCurrent clear{*this};
        done = p2p_current_ && (is_send ? p.buffer->waitSend(opts_.timeout)
                                        : p.buffer->waitRecv(opts_.timeout));
      }
      DDL_CHECK(done, log_prefix(), " ", p.desc, ": aborted, the process group was destroyed first");
      if (!is_send && !p.target.is_contiguous()) p.target.copy_(p.staged);
      const auto n = static_cast<int64_t>(p.staged.nbytes());
      count(p.kind, is_send ? Traffic{n, 0} : Traffic{0, n});
      p.work->finish();
    } catch (const std::exception& e) {
      if (dynamic_cast<const Error*>(&e)) {
        p.work->finish(std::current_exception());
        continue;
      }
      const bool timed_out = is_timeout(e);
      const std::string peer = "rank " + std::to_string(p.peer);
      std::string msg = log_prefix() + " " + p.desc + " failed: " +
                        (timed_out ? peer + " did not post the matching " + (is_send ? "recv" : "send") +
                                         " within " + std::to_string(opts_.timeout.count()) + " ms"
                                   : "the connection to " + peer + " broke") +
                        " (gloo: " + e.what() + ")";
      mark_broken(msg);
      p.work->finish(std::make_exception_ptr(Error(msg)));
    }
  }
}

std::string ProcessGroupGloo::mark_broken(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (!broken_.empty()) return broken_;
    broken_ = what;
  }
  // Closing our side turns the peers' pending operations into errors now, not at their timeout.
  if (shm_) shm_->abort();
  try {
    ctx_->closeConnections();
  } catch (const std::exception&) {
  }
  return what;
}

void ProcessGroupGloo::check_usable(const std::string& desc) const {
  std::lock_guard<std::mutex> lock(state_mu_);
  DDL_CHECK(broken_.empty(), log_prefix(), " ", desc,
            ": the process group is broken by an earlier failure and cannot be used; destroy it "
            "and restart the job (ddlrun --max-restarts). First failure: ", broken_);
}

void ProcessGroupGloo::count(OpKind kind, const Traffic& t) {
  std::lock_guard<std::mutex> lock(state_mu_);
  OpStats& s = stats_[kind];
  s.calls += 1;
  s.bytes_sent += t.sent;
  s.bytes_received += t.received;
}

CommStats ProcessGroupGloo::stats() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return stats_;
}

void ProcessGroupGloo::reset_stats() {
  std::lock_guard<std::mutex> lock(state_mu_);
  stats_ = CommStats{};
}

std::string ProcessGroupGloo::transport() const {
  return shm_ ? "tcp; all_reduce through shared memory" : "tcp";
}

bool ProcessGroupGloo::is_broken() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return !broken_.empty();
}

std::string ProcessGroupGloo::broken_reason() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return broken_;
}

}  // namespace ddl::dist
