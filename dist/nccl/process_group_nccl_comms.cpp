// ProcessGroupNccl's communicators: rank 0's NCCL unique ids through the store, the
// blocking ncclCommInitRank of each lane, and the eager connection of the send/recv lanes.
// Made on the group's first call (the send/recv lanes on its first send or recv), under
// launch_mu_; the launch path that asks for them is in process_group_nccl.cpp.
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
#include <chrono>
#include <cstring>
#include <utility>

#include <ddl/dist/nccl/process_group_nccl_internal.h>
#include <ddl/tensor/core/devices.h>

namespace ddl::dist {

using detail::Clock;
using detail::NcclDeviceGuard;

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
      ncclComm_t made[kNumLanes] = {};
      {
        // Unpublished under the lock, aborted after it: the watchdog's lane_failed takes it.
        std::lock_guard<std::mutex> lock(comm_mu_);
        for (int j = first; j < i; ++j) made[j] = std::exchange(c.lanes[j].comm, nullptr);
      }
      for (int j = first; j < i; ++j)
        if (made[j]) ncclCommAbort(made[j]);
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
        // The abort releases kernels a failed connect_p2p left queued (see Note [NCCL abort]).
        mark_broken(std::string(e.what()) + " (the send/recv communicators cannot be created a second time)");
        request_abort();
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
    request_abort();
    throw;
  }
  return *comms_;
}

// See Note [NCCL point-to-point lanes]. Called under launch_mu_, so abort_all (which
// aborts only under it) never frees these communicators meanwhile.
void ProcessGroupNccl::connect_p2p(Comms& c, const std::string& what) {
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

}  // namespace ddl::dist
