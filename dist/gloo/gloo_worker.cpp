// ProcessGroupGloo's machinery: rendezvous, the collective worker thread, the p2p completion
// thread, DDL_DEBUG checks, error reporting and the broken state (see process_group_gloo.h).
#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/address.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include <ddl/base/error.h>
#include <ddl/dist/debug_check.h>
#include <ddl/dist/flight/laggard.h>
#include <ddl/dist/gloo/gloo_abort.h>
#include <ddl/dist/gloo/gloo_collectives.h>
#include <ddl/dist/gloo/gloo_mesh.h>
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/transport/shm_all_reduce.h>
#include <ddl/trace/thread_name.h>
#include <ddl/trace/trace.h>

namespace ddl::dist {

using detail::GlooCall;
using detail::Traffic;

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer's annotation interface (compiler-rt, tsan_interface_ann.cpp).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
#endif

namespace {
// The message of an exception Gloo handed to this thread. Gloo's network thread builds it
// (libstdc++ keeps it in a copy-on-write string) and passes it on under Gloo's own locks,
// which ThreadSanitizer cannot see (libgloo is not instrumented): it would report this
// read as racing with that write. So it is copied once, with TSan's reads ignored for the
// copy only, and everything after reads the copy. See tests/sanitize/tsan.supp.
std::string gloo_message(const std::exception& e) {
#if defined(__SANITIZE_THREAD__)
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  std::string copy(e.what());
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  return copy;
#else
  return e.what();
#endif
}

// Gloo's timeouts say "Timed out waiting ..."; everything else is a broken connection.
bool is_timeout(const std::string& gloo_what) { return gloo_what.find("imed out") != std::string::npos; }

// -1: the variable decides (unset or empty: `unset_means`); otherwise the option does.
bool option_or_env(int option, const char* var, bool unset_means) {
  if (option >= 0) return option > 0;
  const char* v = std::getenv(var);
  if (!v || !*v) return unset_means;
  return std::string(v) != "0";
}

}  // namespace

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, GlooOptions opts)
    : ProcessGroup(rank, size), opts_(std::move(opts)) {
  debug_ = option_or_env(opts_.debug, "DDL_DEBUG", false);
  // One deadline for the whole set-up: rendezvous, connections, the shared-memory exchange.
  const auto deadline =
      std::min(std::chrono::steady_clock::now() + opts_.timeout,
               opts_.deadline == std::chrono::steady_clock::time_point{} ? std::chrono::steady_clock::time_point::max()
                                                                         : opts_.deadline);
  gloo::transport::tcp::attr attr;
  if (!opts_.iface.empty())
    attr.iface = opts_.iface;
  else
    attr.hostname = opts_.hostname.empty() ? "127.0.0.1" : opts_.hostname;
  detail::install_gloo_abort_handler();  // before Gloo's threads exist
  detail::ignore_sigpipe_if_default();   // See Note [SIGPIPE] in gloo_abort.h
  ctx_ = detail::connect_mesh(store, rank, size, attr, opts_.timeout, deadline, log_prefix());
  flight_ = std::make_unique<flight::GroupRecorder>("gloo", store, rank, size);
  flight::publish_host(*flight_);
  last_heard_ = std::make_unique<std::atomic<int64_t>[]>(size);
  heard_from_all();
  if (size > 1) {
    try {
      shm_ = detail::ShmAllReduce::connect(
          *store, rank, size, option_or_env(opts_.shm, "DDL_SHM", true),
          std::max(Millis(1), std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now())),
          &shm_status_, &shm_failed_);
    } catch (const std::exception& e) {  // a rank missed the store exchange
      const std::string msg =
          log_prefix() + " ProcessGroupGloo: setting up the shared-memory all-reduce: " + std::string(e.what());
      detail::report_startup_failure(*store, msg);
      throw Error(msg);
    }
  }
  // Registered last: a constructor that throws never runs the destructor that unregisters.
  in_flight_id_ = detail::register_in_flight([this] { return describe_in_flight(); });
  worker_ = std::thread([this] {
    trace::set_thread_name("comm");  // collectives run here: their spans form this track
    trace::set_os_thread_name("gloo");
    worker_loop();
  });
  p2p_worker_ = std::thread([this] {
    trace::set_thread_name("comm p2p");
    trace::set_os_thread_name("gloo p2p");
    p2p_loop();
  });
}

ProcessGroupGloo::~ProcessGroupGloo() {
  detail::unregister_in_flight(in_flight_id_);  // first: the handler must not see a group being torn down
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
    t.work->finish(
        std::make_exception_ptr(Error(log_prefix() + " " + t.desc + ": the process group was destroyed first")));
  worker_.join();  // a running collective ends by its own timeout at the latest
  p2p_worker_.join();
}

std::shared_ptr<Work> ProcessGroupGloo::enqueue(OpKind kind, std::string desc, std::string fingerprint,
                                                std::string peers, RunFn run) {
  check_usable(desc);
  auto work = std::make_shared<Work>(desc);
  {
    std::lock_guard<std::mutex> lock(mu_);
    DDL_CHECK(!stop_, desc, ": the process group is shutting down");
    queue_.push_back(Task{kind, std::move(desc), std::move(fingerprint), std::move(peers), std::move(run), work});
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
  uint64_t fid = 0;  // its flight-recorder entry (dist/flight/)
  try {
    check_usable(task.desc);
    fid = flight_->start(task.kind, task.fingerprint, -1);
    if (debug_) {
      call.tag = seq_++;
      debug_check(task, call);
    }
    call.tag = seq_++;
    // Described only if the process crashes (no string per call); cleared however run ends.
    struct Running {
      ProcessGroupGloo& pg;
      Running(ProcessGroupGloo& g, const Task* t) : pg(g) { set(t); }
      ~Running() { set(nullptr); }
      void set(const Task* t) {
        std::lock_guard<std::mutex> lock(pg.state_mu_);
        pg.running_ = t;
      }
    };
    Traffic traffic;
    {
      trace::Span span(op_kind_name(task.kind), "comm");
      Running running(*this, &task);
      traffic = task.run(call);
      span.arg("bytes_sent", traffic.sent);
      span.arg("bytes_received", traffic.received);
    }
    heard_from_all();
    count(task.kind, traffic);
    flight_->complete(fid, traffic.sent, traffic.received);
    task.work->finish();
  } catch (const ddl::Error& e) {
    // Argument, DDL_DEBUG or broken-group errors: the message already says everything.
    if (fid) flight_->fail(fid, e.what());
    task.work->finish(std::current_exception());
  } catch (const std::exception& e) {
    // Gloo's IoException (peer gone, timeout) or an enforce failure mid-transfer: the
    // connections are in an unknown state, so the whole group is unusable from here on.
    const std::string what = gloo_message(e);
    const bool timed_out = is_timeout(what);
    const bool via_shm = dynamic_cast<const detail::ShmError*>(&e) != nullptr;
    const auto& mesh = static_cast<const detail::MeshContext&>(*ctx_);  // connect_mesh made it one
    std::string address;
    const int peer = via_shm ? -1 : mesh.peer_in_message(what, &address);
    // See Note [Naming the failed peer]. Which peer went quiet is not in Gloo's timeout
    // message: the ranks' positions in the store tell (dist/flight/laggard.h), else when
    // each last answered.
    std::string heard;
    if (timed_out) {
      const auto wait = std::clamp<Millis>(opts_.timeout / 2, Millis(500), Millis(5000));
      const flight::Laggard l =
          flight::find_laggard(*flight_, flight_->seq_of(fid), task.fingerprint, opts_.timeout, wait);
      if (l.rank >= 0 && l.rank != rank())
        heard = l.message + "; " + last_heard(l.rank);
      else if (l.rank >= 0)
        heard = l.message;
    }
    if (!timed_out) flight::publish_position(*flight_, flight_->seq_of(fid), task.fingerprint);
    for (int r = 0; r < size() && timed_out && heard.empty(); ++r)
      if (r != rank()) heard += (heard.empty() ? "" : "; ") + last_heard(r);
    const std::string msg =
        detail::peer_failure_message(log_prefix() + " " + task.desc, task.peers, peer, address, timed_out,
                                     "no answer within " + std::to_string(opts_.timeout.count()) + " ms (" + heard +
                                         "): a rank hangs, waits in a different call, or the link to it is down",
                                     (via_shm ? "" : "gloo: ") + what);
    mark_broken(msg);
    flight_->fail(fid, msg);
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
    const std::string what = gloo_message(e);
    std::string address;  // a dead peer is named as dead (see Note [Naming the failed peer])
    const int peer = static_cast<const detail::MeshContext&>(*ctx_).peer_in_message(what, &address);
    std::string msg =
        detail::debug_exchange_failure(log_prefix(), task.desc, peer, address, is_timeout(what), opts_.timeout, what);
    if (is_timeout(what) && peer < 0) {  // which rank did not reach it (dist/flight/laggard.h)
      const auto wait = std::clamp<Millis>(opts_.timeout / 2, Millis(500), Millis(5000));
      msg += "; " + flight::find_laggard(*flight_, flight_->seq_of(0), task.fingerprint, opts_.timeout, wait).message;
    }
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
      uint64_t id;
      ~ClearCurrent() {
        {
          std::lock_guard<std::mutex> lock(pg.mu_);
          pg.p2p_current_ = nullptr;
        }
        std::lock_guard<std::mutex> lock(pg.state_mu_);
        pg.p2p_pending_.erase(id);
      }
    };
    try {
      bool done;
      {
        trace::Span span(is_send ? "send" : "recv", "comm",
                         {{"bytes", static_cast<int64_t>(p.staged.nbytes())}, {"peer", p.peer}});
        ClearCurrent clear{*this, p.id};
        done = p2p_current_ && (is_send ? p.buffer->waitSend(opts_.timeout) : p.buffer->waitRecv(opts_.timeout));
      }
      DDL_CHECK(done, log_prefix(), " ", p.desc, ": aborted, the process group was destroyed first");
      if (!is_send && !p.target.is_contiguous()) p.target.copy_(p.staged);
      const auto n = static_cast<int64_t>(p.staged.nbytes());
      heard_from(p.peer);  // a send completes once the peer has announced its receive
      count(p.kind, is_send ? Traffic{n, 0} : Traffic{0, n});
      flight_->complete(p.flight_id, is_send ? n : 0, is_send ? 0 : n);
      p.work->finish();
    } catch (const std::exception& e) {
      if (dynamic_cast<const Error*>(&e)) {
        p.work->finish(std::current_exception());
        continue;
      }
      const std::string what = gloo_message(e);
      const bool timed_out = is_timeout(what);
      // A peer that went quiet cannot be told from one that waits in another call; say
      // both, and when it last answered, rather than guess.
      const std::string msg = detail::peer_failure_message(
          log_prefix() + " " + p.desc, "", timed_out ? -1 : p.peer, "", timed_out,
          "rank " + std::to_string(p.peer) + " stopped answering: nothing from it within " +
              std::to_string(opts_.timeout.count()) + " ms (" + last_heard(p.peer) +
              "): it hangs, waits in a different call, or the link to it is down",
          "gloo: " + what);
      mark_broken(msg);
      flight_->fail(p.flight_id, msg);
      p.work->finish(std::make_exception_ptr(Error(msg)));
    }
  }
}

void ProcessGroupGloo::heard_from(int peer) {
  last_heard_[peer] = std::chrono::steady_clock::now().time_since_epoch().count();
}

void ProcessGroupGloo::heard_from_all() {
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  for (int r = 0; r < size(); ++r) last_heard_[r] = now;
}

std::string ProcessGroupGloo::last_heard(int peer) const {
  using namespace std::chrono;
  const auto age = steady_clock::now().time_since_epoch() - steady_clock::duration(last_heard_[peer].load());
  const std::time_t when = system_clock::to_time_t(system_clock::now() - duration_cast<system_clock::duration>(age));
  std::tm utc{};
  gmtime_r(&when, &utc);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", &utc);
  // The peer's host by its listening address ("[10.99.0.2]:40073" -> "10.99.0.2"): which
  // machine to look at when it hangs (a rank number alone does not say).
  std::string host;
  if (ctx_) {
    const auto& mesh = static_cast<const detail::MeshContext&>(*ctx_);  // connect_mesh made it one
    if (peer >= 0 && peer < static_cast<int>(mesh.peer_addresses.size()) && !mesh.peer_addresses[peer].empty()) {
      const std::string& a = mesh.peer_addresses[peer][0];
      const size_t close = a.rfind(']');
      host = " (host " + (a.front() == '[' && close != std::string::npos ? a.substr(1, close - 1) : a) + ")";
    }
  }
  char text[160];
  std::snprintf(text, sizeof text, "last heard from rank %d%s %.1f s ago, at %s UTC", peer, host.c_str(),
                duration<double>(age).count(), clock);
  return text;
}

std::string ProcessGroupGloo::describe_in_flight() const {
  std::unique_lock<std::mutex> lock(state_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return "";
  std::string d = log_prefix() + " gloo group: ";
  d += running_ ? "running " + running_->desc + " with " + running_->peers : "no collective running";
  int shown = 0;
  for (const auto& [id, desc] : p2p_pending_)
    if (shown++ < 4) d += (shown == 1 ? "; waiting on " : ", ") + desc;
  if (shown > 4) d += " and " + std::to_string(shown - 4) + " more sends/recvs";
  return d;
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
            "and restart the job (ddlrun --max-restarts). First failure: ",
            broken_);
}

void ProcessGroupGloo::count(OpKind kind, const Traffic& t) {
  std::lock_guard<std::mutex> lock(state_mu_);
  OpStats& s = stats_[kind];
  s.calls += 1;
  s.bytes_sent += t.sent;
  s.bytes_received += t.received;
  if (trace::enabled()) [[unlikely]]  // the running totals, as a counter track beside the comm threads
    trace::counter("traffic bytes", {{"sent", stats_.bytes_sent()}, {"received", stats_.bytes_received()}});
}

CommStats ProcessGroupGloo::stats() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return stats_;
}

void ProcessGroupGloo::reset_stats() {
  std::lock_guard<std::mutex> lock(state_mu_);
  stats_ = CommStats{};
}

std::string ProcessGroupGloo::transport() const { return shm_ ? "tcp; all_reduce through shared memory" : "tcp"; }

bool ProcessGroupGloo::is_broken() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return !broken_.empty();
}

std::string ProcessGroupGloo::broken_reason() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return broken_;
}

}  // namespace ddl::dist
