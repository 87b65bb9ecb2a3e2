// ProcessGroupNccl (see process_group_nccl.h): construction and destruction, the launch path
// (ordering the lanes after the caller's stream, handing the end event to the watchdog),
// Work::wait, DDL_DEBUG checks and the registration with init_process_group. Communicator
// creation is in process_group_nccl_comms.cpp, the watchdog and the abort path in
// process_group_nccl_watchdog.cpp, the collectives in process_group_nccl_ops.cpp.
//
// Note [NCCL stream ordering]
// The caller's kernels run on its current stream; NCCL runs on the group's own streams (one
// per lane, see below, so point-to-point never queues behind a collective). Before an
// operation the NCCL stream waits on an event recorded on the current stream, so the inputs
// are ready without a host sync. A non-contiguous operand is staged into a contiguous
// buffer on that stream, after the wait (so it reads what the caller's kernels wrote, and
// after an earlier operation's copy back into the same view), and a written one gets its
// result back from the buffer on that stream too, before the end event. The launched
// tensors and buffers stay referenced until the end event fires: the caching allocator must
// not hand their memory to another kernel while NCCL still reads or writes it. That holds
// on every path: once NCCL has been given the tensors, a later failure in the launch parks
// the operation with its tensors (the group is then broken) instead of dropping it. The
// watchdog thread polls end events (and ncclCommGetAsyncError) and completes each Work,
// sleeping between polls with exponential backoff (20 us doubling to 1 ms while nothing
// completes; a new launch wakes it), so an idle or slow collective does not burn a core.
// Past the timeout it aborts the communicators (see Note [NCCL abort]), which releases
// kernels stuck waiting for a dead peer, and fails every pending Work with a message naming
// the operation and rank. An aborted communicator is freed, so comm_mu_ orders abort_all
// against the code that creates, copies or polls one: a communicator is published only
// while the group is not broken, launches copy their lane under the lock, and a launch that
// reaches the queue after the group broke is failed and parked, never queued.
//
// Note [NCCL errors in a launch]
// When `issue` throws, a copy or part of a group may already be queued on the lane. An error
// NCCL returned as ncclInvalidArgument or ncclInvalidUsage is a call it refused before using
// the communicator: the group stays usable, the end event is recorded anyway, the tensors stay
// referenced until it fires, and that Work then fails with the error. Any other NCCL result
// (ncclSystemError, ncclRemoteError, ncclInternalError, ...: e.g. a connection setup inside
// the call failed) leaves the communicator in an unknown state, and with blocking
// communicators ncclCommGetAsyncError need not report it: the result itself (carried by
// detail::NcclCallError) breaks the group, parks the launch and wakes the watchdog to abort.
// A non-NCCL error (a CUDA copy) breaks it only when the communicator reports a failure.
//
// Note [NCCL Work::wait]
// As in PyTorch (ProcessGroupNCCL's WorkNCCL::wait), Work::wait() does not block the host:
// it makes the caller's current stream on the group's GPU wait for the operation's end event
// (cudaStreamWaitEvent) and returns, so the kernels that consume the result are queued
// behind it while the CPU goes on. It throws at once when the operation already failed.
// A failure found later (a peer died, the timeout passed) breaks the group: the next call
// throws, and the consumer's stream proceeds once the abort releases NCCL's kernels.
// Work::wait(timeout), is_completed() and on_completion still follow the watchdog, i.e. the
// GPU finishing. barrier() is the exception: its wait blocks the host, since a host barrier
// is what callers ask for.
//
// Note [NCCL barrier]
// barrier() is a one-float all-reduce on the collective lane, ordered after the caller's
// stream, as any collective; its wait blocks the host until that all-reduce is done, i.e.
// every rank has reached it and this rank's earlier collectives and caller's-stream work
// are done (PyTorch's ProcessGroupNCCL::barrier is the same all-reduce). It does not cover
// sends and receives, as on gloo: wait on their Work before using their data. It cannot:
// were the caller's stream (or the host) ordered after this rank's earlier receives, two
// ranks that each run `recv; barrier; send` would deadlock, since each send is ordered
// after its own stream and so after its own receive, whose send is the peer's.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <utility>
#include <vector>

#include <ddl/dist/debug_check.h>
#include <ddl/dist/env.h>
#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/init.h>
#include <ddl/dist/nccl/process_group_nccl_internal.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/trace/thread_name.h>
#include <ddl/trace/trace.h>

namespace ddl::dist {

using detail::Clock;
using detail::NcclDeviceGuard;

ProcessGroupNccl::ProcessGroupNccl(std::shared_ptr<Store> store, int rank, int size, NcclOptions opts)
    : ProcessGroup(rank, size),
      store_(std::move(store)),
      opts_(opts),
      debug_(opts.debug < 0 ? detail::debug_from_env() : opts.debug > 0) {
  DDL_CHECK(cuda::is_available(), log_prefix(),
            " ProcessGroupNccl: the nccl backend needs a CUDA GPU, but none "
            "is usable here (ddl::cuda::device_count() is 0); use the gloo backend for CPU tensors");
  DDL_CHECK(store_ != nullptr, "ProcessGroupNccl: a store is required for the rendezvous");
  flight_ = std::make_unique<flight::GroupRecorder>("nccl", store_, rank, size);
  watchdog_ = std::thread([this] {
    trace::set_os_thread_name("nccl watchdog");
    watchdog_loop();
  });
  if (opts_.device >= 0) {
    std::exception_ptr failed;
    {
      std::lock_guard<std::timed_mutex> lock(launch_mu_);
      try {
        comms_for(opts_.device, "ProcessGroupNccl()");
      } catch (...) {
        failed = std::current_exception();
      }
    }
    abort_if_pending();  // see Note [NCCL abort]
    if (failed) {
      {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
      }
      cv_.notify_all();
      watchdog_.join();  // after an abort comms_for requested
      std::rethrow_exception(failed);
    }
  }
}

ProcessGroupNccl::~ProcessGroupNccl() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  watchdog_.join();  // it drains pending_: each Work completes, fails or times out (and aborts)
  if (!comms_) return;
  // Never throws (NcclDeviceGuard does): a group left in init's static state is destroyed at
  // exit, possibly after the CUDA runtime was torn down; then NCCL is left alone.
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess || cudaSetDevice(comms_->device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  for (Lane& l : comms_->lanes) {
    if (l.comm == nullptr) continue;
    if (is_broken())
      ncclCommAbort(l.comm);
    else
      ncclCommDestroy(l.comm);
  }
  if (comms_->scratch) cudaFree(comms_->scratch);
  if (comms_->p2p_scratch) cudaFree(comms_->p2p_scratch);
  cudaSetDevice(previous);
  // The streams come from cuda::Stream::create and live until the process ends.
}

int ProcessGroupNccl::device() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return comms_ ? comms_->device : -1;
}

int ProcessGroupNccl::default_device() const {
  if (int d = device(); d >= 0) return d;
  if (opts_.device >= 0) return opts_.device;
  return read_launch_env().local_rank % cuda::device_count();
}

void NcclWork::create_end_event(const std::string& what) {
  DDL_NCCL_CUDA(cudaEventCreateWithFlags(&end_, cudaEventDisableTiming), what);
}

// See Note [NCCL Work::wait].
void NcclWork::wait() {
  if (host_blocking_ || is_completed()) {
    Work::wait();  // rethrows the error of a failed operation
    return;
  }
  NcclDeviceGuard g(device_);
  auto current = static_cast<cudaStream_t>(cuda::current_stream(device_).handle());
  DDL_NCCL_CUDA(cudaStreamWaitEvent(current, end_, 0), description() + ": Work::wait");
}

std::shared_ptr<Work> ProcessGroupNccl::launch(OpKind kind, std::string desc, const std::string& fingerprint,
                                               std::string peers, int device, int lane_index,
                                               std::vector<Operand> operands, int64_t sent, int64_t received,
                                               const IssueFn& issue) {
  check_usable(desc);
  const auto order = debug_check(fingerprint, desc);  // before launch_mu_: send/recv need not wait for it
  // Destroyed after `lock`, so the abort abort_all left pending runs then: see Note [NCCL abort].
  struct AfterUnlock {
    ProcessGroupNccl* pg;
    ~AfterUnlock() { pg->abort_if_pending(); }
  } after_unlock{this};
  std::lock_guard<std::timed_mutex> lock(launch_mu_);
  check_usable(desc);  // the watchdog may have aborted while we waited for the lock
  DDL_ASSERT(lane_index >= 0 && lane_index < kNumLanes, "bad lane ", lane_index);
  Comms& c = comms_for(device, desc, lane_index != kCollectiveLane);
  const std::string what = log_prefix() + " " + desc;
  NcclDeviceGuard g(c.device);
  Lane lane;  // a copy: abort_all may null the communicator meanwhile
  {
    std::lock_guard<std::mutex> lock(comm_mu_);
    lane = c.lanes[lane_index];
  }
  if (lane.comm == nullptr) check_usable(desc);  // aborted, or its creation failed: broken either way
  DDL_ASSERT(lane.comm != nullptr, "no NCCL communicator on lane ", lane_index);
  auto current = static_cast<cudaStream_t>(cuda::current_stream(c.device).handle());

  // Everything that can fail before NCCL gets the tensors happens first.
  auto l = std::make_unique<Launch>();
  l->kind = kind;
  l->desc = std::move(desc);
  l->peers = std::move(peers);
  l->work = std::make_shared<NcclWork>(l->desc, c.device, kind == OpKind::Barrier);
  l->work->create_end_event(what);
  l->end = l->work->end();
  for (const Operand& o : operands)
    if (o.t.defined()) l->keep.push_back(o.t);
  l->lane = lane_index;
  l->sent = sent;
  l->received = received;
  const bool p2p = kind == OpKind::Send || kind == OpKind::Recv;  // peers: "peer rank N"
  l->flight_id = flight_->start(kind, p2p ? l->desc : fingerprint, std::max(sent, received),
                                p2p ? std::atoi(l->peers.c_str() + l->peers.rfind(' ') + 1) : -1);

  // See Note [NCCL stream ordering].
  {
    cudaEvent_t ready = nullptr;
    DDL_NCCL_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), what);
    cudaError_t err = cudaEventRecord(ready, current);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(lane.stream, ready, 0);
    cudaEventDestroy(ready);  // released once the wait is satisfied
    DDL_NCCL_CUDA(err, what);
  }
  // Staging, `issue` and the copies back run on the lane (Note [NCCL stream ordering]).
  cuda::StreamGuard on_lane(cuda::Stream(c.device, lane.stream));
  std::vector<std::pair<Tensor, Tensor>> copy_back;  // (target, staged buffer)
  try {
    std::vector<Tensor> bufs;
    for (const Operand& o : operands) {
      if (!o.t.defined() || o.t.is_contiguous()) {
        bufs.push_back(o.t);
        continue;
      }
      bufs.push_back(o.t.contiguous());  // allocated on the lane: kept until `end` fires
      l->keep.push_back(bufs.back());
      if (o.written) copy_back.emplace_back(o.t, bufs.back());
    }
    issue(lane, bufs, what);
  } catch (const Error& e) {
    // See Note [NCCL errors in a launch]: only a call NCCL refused leaves the group usable.
    const auto* nccl = dynamic_cast<const detail::NcclCallError*>(&e);
    if (nccl ? !nccl->argument_error() : lane_failed(lane_index, nullptr)) {
      mark_broken(e.what());
      park(std::move(l), e.what());  // NCCL may have been given some of the tensors
      request_abort();
      throw;
    }
    // A copy or part of a group may be queued already: track it until its end event fires.
    l->error = std::current_exception();
    if (cudaEventRecord(l->end, lane.stream) == cudaSuccess) {
      enqueue(std::move(l));
    } else {
      cudaGetLastError();
      park(std::move(l), e.what());
    }
    throw;
  }
  // From here NCCL owns the tensors until `end` fires: a failure must not drop them.
  try {
    if (!copy_back.empty()) {
      // Non-contiguous targets get their results on the lane, after NCCL, before `end`: the
      // caller's stream must not wait for the operation here (a receive would then order
      // every later send of this rank after it: a pairwise exchange would deadlock), and
      // wait() orders it after `end`, the copy included.
      for (auto& [target, staged] : copy_back) target.copy_(staged);
    }
    DDL_NCCL_CUDA(cudaEventRecord(l->end, lane.stream), what);
  } catch (const Error& e) {
    // The operation can no longer be tracked: its tensors stay alive until the group is
    // destroyed, and the group is broken (the destructor aborts the communicators).
    const std::string why = mark_broken(std::string(e.what()) + " (after NCCL was launched)");
    park(std::move(l), why);
    throw;
  }
  std::shared_ptr<Work> work = l->work;
  enqueue(std::move(l));
  return work;
}

void ProcessGroupNccl::enqueue(std::unique_ptr<Launch> l) {
  l->deadline = Clock::now() + opts_.timeout;  // from here: issuing may have set up connections
  if (trace::enabled()) [[unlikely]] {
    // From the hand-off to the watchdog until it sees the end event (docs/trace.md): the time
    // queued behind earlier work on the GPU counts, as it would in a profiler's NCCL row.
    static std::atomic<uint64_t> next_trace_id{0};
    l->trace_id = ++next_trace_id;
    trace::async_begin(op_kind_name(l->kind), "nccl", l->trace_id,
                       {{"bytes_sent", l->sent}, {"bytes_received", l->received}});
  }
  {
    // abort_all marks the group broken before it takes pending_: a launch pushed before that
    // is failed by abort_all, one that comes later sees the mark here.
    std::lock_guard<std::mutex> q(mu_);
    if (!is_broken()) pending_.push_back(std::move(l));
  }
  if (l)
    park(std::move(l), broken_reason());
  else
    cv_.notify_all();
}

std::shared_ptr<Work> ProcessGroupNccl::finished_work(const std::string& desc, const std::string& fingerprint) {
  check_usable(desc);
  debug_check(fingerprint, desc);  // nothing to launch: the order lock is released at once
  auto w = std::make_shared<Work>(desc);
  w->finish();
  return w;
}

// See Note [DDL_DEBUG check] (gloo_worker.cpp) and Note [DDL_DEBUG through the store]
// (debug_check.cpp). Runs on the caller's thread, before anything is enqueued on the GPU.
std::unique_lock<std::mutex> ProcessGroupNccl::debug_check(const std::string& fingerprint, const std::string& desc) {
  if (!debug_ || fingerprint.empty()) return {};
  std::unique_lock<std::mutex> order(debug_mu_);
  const int64_t seq = debug_seq_++;  // every rank checks every collective: seqs agree
  const std::string mine = detail::debug_record(seq, fingerprint);
  std::vector<std::string> all;
  try {
    all = detail::store_exchange_records(*store_, rank(), size(), seq, mine, desc, opts_.timeout);
  } catch (const Error& e) {
    // A rank that missed this check would pair its next one with our next: stop here.
    mark_broken(e.what());
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    OpStats& s = stats_[OpKind::DebugCheck];
    s.calls += 1;
    for (int r = 0; r < size() && size() > 1; ++r)  // the records as they went through the store
      (r == rank() ? s.bytes_sent : s.bytes_received) += static_cast<int64_t>(all[r].size());
  }
  // A mismatch is seen alike by every rank, which all launch nothing: the group stays usable.
  const std::string msg = detail::debug_mismatch_message(log_prefix(), all);
  DDL_CHECK(msg.empty(), msg);
  return order;
}

CommStats ProcessGroupNccl::stats() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return stats_;
}

void ProcessGroupNccl::reset_stats() {
  std::lock_guard<std::mutex> lock(state_mu_);
  stats_ = CommStats{};
}

// "nccl" for init_process_group; see register_backend in init.h.
namespace {
[[maybe_unused]] const bool kRegistered = [] {
  register_backend("nccl", [](std::shared_ptr<Store> store, int rank, int size, const InitOptions& o) {
    NcclOptions n;
    n.timeout = o.timeout;
    return std::make_shared<ProcessGroupNccl>(std::move(store), rank, size, n);
  });
  return true;
}();
}  // namespace

}  // namespace ddl::dist
