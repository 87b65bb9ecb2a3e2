// ProcessGroupNccl (see process_group_nccl.h): communicator creation, the launch path,
// DDL_DEBUG checks, the watchdog and the abort path. The collectives are in
// process_group_nccl_ops.cpp.
//
// Note [NCCL stream ordering]
// The caller's kernels run on its current stream; NCCL runs on the group's own streams
// (one per lane, see below, so point-to-point never queues behind a collective). Before an
// operation the NCCL stream waits on an event recorded on the current stream, so the inputs
// are ready without a host sync. The launched tensors stay referenced until the operation's
// end event fires: the caching allocator must not hand their memory to another kernel while
// NCCL still reads or writes it. That holds on every path: once NCCL has been given the
// tensors, a later failure in the launch parks the operation with its tensors (the group is
// then broken) instead of dropping it. The watchdog thread polls end events (and
// ncclCommGetAsyncError) and completes each Work, sleeping between polls with exponential
// backoff (20 us doubling to 1 ms while nothing completes; a new launch wakes it), so an idle
// or slow collective does not burn a core. Past the timeout it aborts the communicators
// (see Note [NCCL abort]), which releases kernels stuck waiting for a dead peer, and fails
// every pending Work with a message naming the operation and rank. An aborted communicator is
// freed, so comm_mu_ orders abort_all against the code that creates, copies or polls one: a
// communicator is published only while the group is not broken, launches copy their lane
// under the lock, and a launch that reaches the queue after the group broke is failed and
// parked, never queued.
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
// Note [NCCL abort]
// The communicators are blocking (ncclCommInitRank), and NCCL's fault-tolerance guide forbids
// aborting one while another thread is inside an NCCL call on it (ncclCommAbort frees it).
// Every NCCL call on the communicators runs under launch_mu_ (launches, their creation), so
// abort_all aborts only while holding it. When it cannot get it within a second, a thread is
// inside NCCL, typically blocked on the host in connection setup or ncclCommInitRank waiting
// for a peer that never arrives: the group's timeout cannot interrupt that. abort_all then
// only marks the group broken and fails the pending Work, saying so, and leaves the
// communicators to the destructor or process exit (ddlrun ends the job when a rank dies).
// Non-blocking communicators (ncclCommInitRankConfig with blocking = 0) would lift this.
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
// Note [NCCL point-to-point lanes]
// NCCL runs the operations of one communicator one after another, and a receive blocks its
// stream until the matching send arrives. With one communicator for all sends and receives,
// two ranks that each post recv-then-send to the other would wait on each other forever,
// yet our interface lets sends and receives be posted in any order. So a group that uses
// point-to-point has two more communicators, each with its own stream: "up" carries every
// message from a lower to a higher rank, "down" every message from a higher to a lower one.
// A pairwise exchange then never waits on itself, a ring (send right, receive from the left)
// completes from its highest rank back, and a hub (gather by hand) works in any order.
// Messages between two ranks in one direction are matched in posting order: tags are not
// used. Collectives cannot share either communicator (a collective queued behind a receive
// could wait for a rank whose matching send is queued behind its own collective). Each
// communicator costs GPU buffers, proxy threads and an init of up to a second, so the two
// point-to-point ones are created only on the group's first send or recv, which every rank
// must make (as with the group's first call): a collective-only job (DDP) has one.
// NCCL connects a send/recv peer lazily, on the host inside the first call to it (taskAppend
// marks the peer, ncclGroupEnd runs ncclTransportP2pSetup, which exchanges connection data
// with the peer through bootstrapSend/Recv on that communicator and waits for it). Left lazy,
// world 2 with both ranks posting a receive first deadlocks on the host: rank 0 waits in the
// down lane's setup for rank 1, which waits in the up lane's setup for rank 0. So
// connect_p2p connects every pair right after the lanes are made, where every rank is by
// contract: on the up lane, in one group, a one-float send to every higher rank and a receive
// from every lower one; the mirror on the down lane; then it waits (up to the timeout) for
// both streams. NCCL connects all of a peer's channels on the first message whatever its
// size, so later sends and receives find them connected.
//
// Note [NCCL barrier]
// barrier() is a one-float all-reduce on the collective lane, ordered after the caller's
// stream only, as any collective. Its end event is then recorded again on a join stream that
// waits for the all-reduce and for the up and down lanes' work queued so far, so the barrier
// completes (and its host wait returns) once every rank has reached it (their earlier
// collectives have run) and this rank's earlier work on the group, sends and receives
// included, is done. It does not wait for other ranks' sends and receives. The all-reduce
// itself never waits for the lanes: a receive posted before the barrier whose send the peer
// posts after its own barrier then completes instead of deadlocking, as on gloo.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "dist/debug_check.h"
#include "dist/env.h"
#include "dist/init.h"
#include "dist/nccl/process_group_nccl_internal.h"
#include "tensor/devices.h"

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
  watchdog_ = std::thread([this] { watchdog_loop(); });
  if (opts_.device >= 0) {
    std::lock_guard<std::timed_mutex> lock(launch_mu_);
    try {
      comms_for(opts_.device, "ProcessGroupNccl()");
    } catch (...) {
      {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
      }
      cv_.notify_all();
      watchdog_.join();
      throw;
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

void ProcessGroupNccl::exchange_unique_ids(const std::string& key, void* ids, size_t bytes, const std::string& what) {
  try {
    if (rank() == 0) {
      auto* id = static_cast<ncclUniqueId*>(ids);
      for (size_t i = 0; i < bytes / sizeof(ncclUniqueId); ++i) DDL_NCCL_CHECK(ncclGetUniqueId(&id[i]), nullptr, what);
      store_->set(key + "/unique_ids", std::string(static_cast<const char*>(ids), bytes));
    } else {
      const std::string v = store_->get(key + "/unique_ids", opts_.timeout);
      DDL_CHECK(v.size() == bytes, what, ": the store holds a malformed NCCL unique id (", v.size(), " bytes)");
      std::memcpy(ids, v.data(), bytes);
    }
    store_->add(key + "/joined", 1);
    const auto deadline = Clock::now() + opts_.timeout;
    int64_t joined = 0;
    while ((joined = store_->add(key + "/joined", 0)) < size()) {
      DDL_CHECK(Clock::now() < deadline, what, ": only ", joined, " of ", size(), " ranks arrived within ",
                opts_.timeout.count(), " ms; every rank must make the same first call on the group",
                key == "nccl" ? "" : " and a first send or recv");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  } catch (const Error& e) {
    DDL_CHECK(false, what, ": rendezvous failed: ", e.what());
  }
}

void ProcessGroupNccl::init_lanes(Comms& c, int first, int last, const void* ids, const std::string& what) {
  for (int i = first; i < last; ++i) {
    Lane& l = c.lanes[i];
    l.stream = static_cast<cudaStream_t>(cuda::Stream::create(c.device).handle());
    l.scratch = c.scratch;
    ncclUniqueId id;
    std::memcpy(&id, static_cast<const char*>(ids) + (i - first) * sizeof(ncclUniqueId), sizeof id);
    // Made in a local and published under comm_mu_ only while the group is not broken:
    // abort_all (which may run meanwhile, see Note [NCCL stream ordering]) never sees it half made.
    ncclComm_t comm = nullptr;
    const ncclResult_t res = ncclCommInitRank(&comm, size(), id, rank());
    bool published = false;
    if (res == ncclSuccess) {
      std::lock_guard<std::mutex> lock(comm_mu_);
      if (!is_broken()) {
        l.comm = comm;
        published = true;
      }
    }
    if (!published) {
      if (res == ncclSuccess) ncclCommAbort(comm);
      {
        std::lock_guard<std::mutex> lock(comm_mu_);
        for (int j = first; j < i; ++j) {
          if (c.lanes[j].comm) ncclCommAbort(c.lanes[j].comm);
          c.lanes[j].comm = nullptr;
        }
      }
      DDL_NCCL_CHECK(res, nullptr,
                     what + " (ncclCommInitRank, " + (i == kCollectiveLane ? "collectives" : "send/recv") + ")");
      DDL_CHECK(false, what, ": the group broke while the communicators were made: ", broken_reason());
    }
  }
}

ProcessGroupNccl::Comms& ProcessGroupNccl::comms_for(int device, const std::string& desc, bool p2p) {
  if (comms_) {
    DDL_CHECK(comms_->device == device, log_prefix(), " ", desc,
              ": this nccl group communicates on cuda:", comms_->device, " but the tensor is on cuda:", device,
              "; a group serves one GPU per process (move the tensor, or create another group)");
    if (p2p && !comms_->p2p_tried) {
      // Launches are serialised by launch_mu_: only this thread creates lanes now.
      comms_->p2p_tried = true;
      const std::string what =
          log_prefix() + " ProcessGroupNccl: creating the send/recv communicators on cuda:" + std::to_string(device) +
          " (first send or recv: " + desc + ")";
      try {
        NcclDeviceGuard g(device);
        ncclUniqueId ids[2];
        exchange_unique_ids("nccl/p2p", ids, sizeof ids, what);
        init_lanes(*comms_, kUpLane, kNumLanes, ids, what);
        connect_p2p(*comms_, what);
      } catch (const Error& e) {
        // A retry would reuse the store keys, whose check-in count is already full, and hang.
        mark_broken(std::string(e.what()) + " (the send/recv communicators cannot be created a second time)");
        throw;
      }
    }
    return *comms_;
  }
  DDL_CHECK(device >= 0 && device < cuda::device_count(), log_prefix(), " ", desc, ": cuda:", device,
            " does not exist; this machine has ", cuda::device_count(), " GPU(s)");
  const std::string what = log_prefix() +
                           " ProcessGroupNccl: creating the communicators on cuda:" + std::to_string(device) +
                           " (first call: " + desc + ")";
  try {
    NcclDeviceGuard g(device);
    // Rank 0 makes the unique ids; the others read them from the store. The first call is
    // the same on every rank, so a first send or recv makes all three lanes at once.
    ncclUniqueId ids[kNumLanes];
    const int lanes = p2p ? kNumLanes : 1;
    exchange_unique_ids(p2p ? "nccl/all" : "nccl", ids, sizeof(ncclUniqueId) * static_cast<size_t>(lanes), what);
    auto c = std::make_unique<Comms>();
    c->device = device;
    c->p2p_tried = p2p;
    DDL_NCCL_CUDA(cudaMalloc(reinterpret_cast<void**>(&c->scratch), sizeof(float)), what);
    try {
      DDL_NCCL_CUDA(cudaMemset(c->scratch, 0, sizeof(float)), what);
      init_lanes(*c, kCollectiveLane, lanes, ids, what);
    } catch (...) {
      cudaFree(c->scratch);
      throw;
    }
    {
      std::lock_guard<std::mutex> comm_lock(comm_mu_);
      std::lock_guard<std::mutex> lock(state_mu_);
      comms_ = std::move(c);
    }
    // Published first: should connecting fail, the destructor aborts the communicators
    // (releasing the connecting kernels) before it frees their buffers.
    if (p2p) connect_p2p(*comms_, what);
  } catch (const Error& e) {
    // A retry would reuse the store keys, whose check-in count is already full, and hang.
    mark_broken(std::string(e.what()) + " (the communicators cannot be created a second time)");
    throw;
  }
  return *comms_;
}

// See Note [NCCL point-to-point lanes]. Called under launch_mu_, so abort_all (which
// aborts only under it) never frees these communicators meanwhile.
void ProcessGroupNccl::connect_p2p(Comms& c, const std::string& what) {
  c.join = static_cast<cudaStream_t>(cuda::Stream::create(c.device).handle());
  if (size() == 1) return;
  const std::string connecting = what + " (connecting)";
  DDL_NCCL_CUDA(cudaMalloc(reinterpret_cast<void**>(&c.p2p_scratch), 4 * sizeof(float)), what);
  for (int i : {kUpLane, kDownLane}) {
    // Up: a message to every higher rank and from every lower one; down: the mirror.
    const Lane& l = c.lanes[i];
    float* out = c.p2p_scratch + 2 * (i - kUpLane);
    float* in = out + 1;
    DDL_NCCL_CUDA(cudaMemsetAsync(out, 0, 2 * sizeof(float), l.stream), what);
    detail::NcclGroup group(l.comm, connecting);
    for (int r = 0; r < size(); ++r) {
      if (r == rank()) continue;
      if ((r > rank()) == (i == kUpLane))
        DDL_NCCL_CHECK(ncclSend(out, 1, ncclFloat32, r, l.comm, l.stream), l.comm, what);
      else
        DDL_NCCL_CHECK(ncclRecv(in, 1, ncclFloat32, r, l.comm, l.stream), l.comm, what);
    }
    group.end();  // NCCL connects the peers here, on the host, with each of them
  }
  const auto deadline = Clock::now() + opts_.timeout;
  for (int i : {kUpLane, kDownLane}) {
    const Lane& l = c.lanes[i];
    cudaError_t q = cudaSuccess;
    while ((q = cudaStreamQuery(l.stream)) == cudaErrorNotReady) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(l.comm, &async);
      if (async != ncclInProgress) DDL_NCCL_CHECK(async, l.comm, connecting);
      DDL_CHECK(Clock::now() < deadline, what, ": the first messages between the ranks did not arrive within ",
                opts_.timeout.count(), " ms: a peer died or hangs");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    DDL_NCCL_CUDA(q, connecting);
  }
}

namespace {
// See Note [NCCL barrier]: `end`, recorded after the barrier's all-reduce, is recorded again
// on the join stream once that all-reduce and the lanes' work queued so far are done.
void join_p2p(const ProcessGroupNccl::Comms& c, cudaEvent_t end, const std::string& what) {
  if (c.join == nullptr) return;  // no send or recv yet
  cudaEvent_t tail = nullptr;
  DDL_NCCL_CUDA(cudaEventCreateWithFlags(&tail, cudaEventDisableTiming), what);
  cudaError_t err = cudaStreamWaitEvent(c.join, end, 0);
  for (int i : {kUpLane, kDownLane}) {  // a wait takes the event as last recorded: reuse is safe
    if (err == cudaSuccess) err = cudaEventRecord(tail, c.lanes[i].stream);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(c.join, tail, 0);
  }
  cudaEventDestroy(tail);  // released once the waits are satisfied
  if (err == cudaSuccess) err = cudaEventRecord(end, c.join);
  DDL_NCCL_CUDA(err, what);
}
}  // namespace

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
                                               std::string peers, int device, int lane_index, std::vector<Tensor> keep,
                                               std::vector<std::pair<Tensor, Tensor>> copy_back, int64_t sent,
                                               int64_t received, const IssueFn& issue) {
  check_usable(desc);
  const auto order = debug_check(fingerprint, desc);  // before launch_mu_: send/recv need not wait for it
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
  l->keep = std::move(keep);
  for (auto& [target, staged] : copy_back) l->keep.push_back(staged);
  l->lane = lane_index;
  l->sent = sent;
  l->received = received;

  // See Note [NCCL stream ordering]. A barrier's all-reduce too waits for the caller's stream
  // only: see Note [NCCL barrier] for the point-to-point lanes.
  {
    cudaEvent_t ready = nullptr;
    DDL_NCCL_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), what);
    cudaError_t err = cudaEventRecord(ready, current);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(lane.stream, ready, 0);
    cudaEventDestroy(ready);  // released once the wait is satisfied
    DDL_NCCL_CUDA(err, what);
  }
  try {
    issue(lane, what);
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
    DDL_NCCL_CUDA(cudaEventRecord(l->end, lane.stream), what);
    if (kind == OpKind::Barrier) join_p2p(c, l->end, what);
    if (!copy_back.empty()) {
      // Non-contiguous targets get their results on the caller's stream, after NCCL is done.
      DDL_NCCL_CUDA(cudaStreamWaitEvent(current, l->end, 0), what);
      for (auto& [target, staged] : copy_back) target.copy_(staged);
      DDL_NCCL_CUDA(cudaEventRecord(l->end, current), what);
    }
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

void ProcessGroupNccl::park(std::unique_ptr<Launch> l, const std::string& why) {
  l->work->finish(std::make_exception_ptr(Error(log_prefix() + " " + l->desc + " failed: " + why)));
  std::lock_guard<std::mutex> lock(mu_);
  aborted_.push_back(std::move(l));
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
    if (!device_set) {
      cudaSetDevice(device());  // for the event queries, aborts and frees that follow
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
      // here comes with every earlier one it waited for (after barrier() the counts are in).
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
      if (l->error) {   // its launch threw; what it had queued is done now
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
    // See Note [NCCL abort]: never while another thread may be inside NCCL.
    std::unique_lock<std::timed_mutex> lock(launch_mu_, std::chrono::seconds(1));
    if (lock.owns_lock()) {
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
  const std::string note = aborted ? "; the NCCL communicators were aborted"
                                   : "; another thread is still inside an NCCL call on this group (e.g. setting up "
                                     "a connection, waiting for a peer), so the communicators were not aborted and "
                                     "are left to the group's destructor or process exit";
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    abort_note_ = note;
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

CommStats ProcessGroupNccl::stats() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return stats_;
}

void ProcessGroupNccl::reset_stats() {
  std::lock_guard<std::mutex> lock(state_mu_);
  stats_ = CommStats{};
}

bool ProcessGroupNccl::is_broken() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return !broken_.empty();
}

std::string ProcessGroupNccl::broken_reason() const {
  std::lock_guard<std::mutex> lock(state_mu_);
  return broken_ + abort_note_;
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
