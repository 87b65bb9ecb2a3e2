// ProcessGroupNccl's watchdog and failure path: the thread that completes each Work when its
// end event fires, the poll of each lane for NCCL's asynchronous errors, the abort at the
// timeout or after a failed launch, and the broken state that abort leaves. What the watchdog
// guarantees is in Note [NCCL stream ordering] (process_group_nccl.cpp).
//
// Note [NCCL abort]
// The communicators are blocking (ncclCommInitRank), and NCCL's fault-tolerance guide forbids
// aborting one while another thread is inside an NCCL call on it (ncclCommAbort frees it).
// Every NCCL call on the communicators runs under launch_mu_ (launches, their creation), so
// abort_all aborts only while holding it. When it cannot get it within a second, a thread
// holds it: inside NCCL (connection setup, ncclCommInitRank waiting for a peer that never
// arrives: the group's timeout cannot interrupt that) or waiting for a peer (the unique ids
// through the store, connect_p2p's poll). abort_all then marks the group broken, fails the
// pending Work saying so, and leaves a flag: the holder, once it lets go of the lock, wakes
// the watchdog to abort (abort_if_pending). A holder that never lets go leaves the
// communicators to the destructor or process exit (ddlrun ends the job when a rank dies).
// Aborting the other communicators meanwhile would need to know which one the holder is
// inside, and that no launch can read a communicator and call NCCL on it after it was
// aborted; not done. Non-blocking communicators (ncclCommInitRankConfig with blocking = 0)
// would lift this.
#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/nccl/process_group_nccl_internal.h>
#include <ddl/trace/trace.h>

namespace ddl::dist {

using detail::Clock;

bool ProcessGroupNccl::lane_failed(int lane, std::string* why) {
  std::lock_guard<std::mutex> lock(comm_mu_);
  ncclComm_t comm = comms_ ? comms_->lanes[lane].comm : nullptr;
  if (comm == nullptr) return false;
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(comm, &async);
  if (async == ncclSuccess || async == ncclInProgress) return false;
  if (why) {
    const char* last = ncclGetLastError(comm);
    *why = std::string(ncclGetErrorString(async)) + (last && *last ? std::string(": ") + last : std::string());
  }
  return true;
}

void ProcessGroupNccl::request_abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abort_requested_ = true;
  }
  cv_.notify_all();
}

void ProcessGroupNccl::abort_if_pending() {
  if (abort_pending_.exchange(false)) request_abort();
}

void ProcessGroupNccl::park(std::unique_ptr<Launch> l, const std::string& why) {
  if (l->trace_id) trace::async_end(op_kind_name(l->kind), "nccl", l->trace_id, {{"failed", 1}});
  flight_->fail(l->flight_id, log_prefix() + " " + l->desc + " failed: " + why);
  l->work->finish(std::make_exception_ptr(Error(log_prefix() + " " + l->desc + " failed: " + why)));
  std::lock_guard<std::mutex> lock(mu_);
  aborted_.push_back(std::move(l));
}

void ProcessGroupNccl::watchdog_loop() {
  constexpr auto kMinPoll = std::chrono::microseconds(20), kMaxPoll = std::chrono::microseconds(1000);
  auto poll = kMinPoll;
  bool device_set = false;
  while (true) {
    bool abort_now = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || abort_requested_ || !pending_.empty(); });
      abort_now = std::exchange(abort_requested_, false);
      if (!abort_now && pending_.empty()) return;
    }
    // For the event queries, aborts and frees that follow; there is no device yet when
    // comms_for failed before making a communicator.
    if (!device_set && device() >= 0) {
      cudaSetDevice(device());
      device_set = true;
    }
    if (abort_now) {  // a launch failed inside NCCL (see Note [NCCL errors in a launch])
      std::string first;
      {
        std::lock_guard<std::mutex> lock(state_mu_);
        first = broken_;  // the launch's failure, marked before it asked
      }
      abort_all(first);
      continue;
    }
    std::vector<std::unique_ptr<Launch>> finished;
    std::string failure;
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Newest first: work the GPU ordered after another ends after it, so a Work completed
      // here comes with every earlier one it waited for (after barrier() the counts of
      // earlier collectives are in; send/recv run on other lanes and may still be pending).
      std::vector<cudaError_t> queried(pending_.size());
      for (size_t i = pending_.size(); i-- > 0;) queried[i] = cudaEventQuery(pending_[i]->end);
      size_t i = 0;
      for (auto it = pending_.begin(); it != pending_.end(); ++i) {
        Launch& l = **it;
        const cudaError_t q = queried[i];
        if (q == cudaSuccess) {
          finished.push_back(std::move(*it));
          it = pending_.erase(it);
          continue;
        }
        std::string nccl_why;
        const bool nccl_failed = lane_failed(l.lane, &nccl_why);
        if (q == cudaErrorNotReady && !nccl_failed && Clock::now() <= l.deadline) {
          ++it;
          continue;
        }
        failure = log_prefix() + " " + l.desc + " (talking to " + l.peers + ")";
        if (q != cudaErrorNotReady) {
          cudaGetLastError();
          failure += std::string(" failed: CUDA reported ") + cudaGetErrorString(q);
        } else if (nccl_failed) {
          failure += " failed: NCCL reported " + nccl_why + " (a peer failed or the network broke)";
        } else {
          failure += " did not complete within " + std::to_string(opts_.timeout.count()) +
                     " ms: a peer died, hangs, or called a different collective";
        }
        break;
      }
    }
    for (auto& l : finished) {
      l->keep.clear();  // the GPU is done with them: the allocator may reuse their memory
      if (l->trace_id) trace::async_end(op_kind_name(l->kind), "nccl", l->trace_id, {{"failed", l->error ? 1 : 0}});
      if (l->error) {  // its launch threw; what it had queued is done now
        flight_->fail(l->flight_id, l->desc + ": its launch failed");
        l->work->finish(l->error);
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(state_mu_);
        OpStats& s = stats_[l->kind];
        s.calls += 1;
        s.bytes_sent += l->sent;
        s.bytes_received += l->received;
      }
      flight_->complete(l->flight_id, l->sent, l->received);
      l->work->finish();
    }
    if (!failure.empty()) {
      abort_all(failure);
    } else if (!finished.empty()) {
      poll = kMinPoll;
    } else {
      // Nothing finished: back off (see Note [NCCL stream ordering]); a launch or stop wakes us.
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, poll);
      poll = std::min(poll * 2, kMaxPoll);
    }
  }
}

void ProcessGroupNccl::abort_all(const std::string& why) {
  const std::string first = mark_broken(why);  // a launch waiting for launch_mu_ stops at check_usable
  bool aborted = false;
  {
    // See Note [NCCL abort]: never while another thread may be inside NCCL. The flag is set
    // first, so a holder that lets go after this try sees it.
    abort_pending_ = true;
    std::unique_lock<std::timed_mutex> lock(launch_mu_, std::chrono::seconds(1));
    if (lock.owns_lock()) {
      abort_pending_ = false;
      std::lock_guard<std::mutex> comm_lock(comm_mu_);  // see Note [NCCL stream ordering]
      if (comms_)
        for (Lane& l : comms_->lanes)
          if (l.comm) {
            ncclCommAbort(l.comm);
            l.comm = nullptr;
          }
      aborted = true;
    }
  }
  std::string note;
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    if (abort_note_.empty())  // the first one's: it went with the first failure
      abort_note_ = aborted ? "; the NCCL communicators were aborted"
                            : "; a thread holds the launch lock (inside NCCL or waiting for a peer), so the "
                              "communicators were not aborted: they are once it lets go, else by the group's "
                              "destructor or at process exit";
    note = abort_note_;
  }
  std::deque<std::unique_ptr<Launch>> failed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed.swap(pending_);
  }
  for (auto& l : failed) park(std::move(l), first + note);  // tensors kept: an aborted kernel may still touch them
}

std::string ProcessGroupNccl::mark_broken(const std::string& what) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (broken_.empty()) broken_ = what;
  return broken_;
}

void ProcessGroupNccl::check_usable(const std::string& desc) const {
  std::lock_guard<std::mutex> lock(state_mu_);
  DDL_CHECK(broken_.empty(), log_prefix(), " ", desc,
            ": the process group is broken by an earlier failure and cannot be used; destroy it and "
            "restart the job (ddlrun --max-restarts). First failure: ",
            broken_, abort_note_);
}

bool ProcessGroupNccl::is_broken() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return !broken_.empty();
}

std::string ProcessGroupNccl::broken_reason() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return broken_ + abort_note_;
}

}  // namespace ddl::dist
