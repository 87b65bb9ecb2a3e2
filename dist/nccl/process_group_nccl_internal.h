// Internal to ProcessGroupNccl (process_group_nccl*.cpp; never include it elsewhere): the
// CUDA and NCCL types behind the header's opaque structs, and checked-call macros that
// name the operation and rank.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <exception>

#include <ddl/base/error.h>
#include <ddl/dist/nccl/process_group_nccl.h>

namespace ddl::dist {

namespace detail {
using Clock = std::chrono::steady_clock;
}  // namespace detail

struct ProcessGroupNccl::Lane {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* scratch = nullptr;  // one float on the device, for barrier()
};

// See Note [NCCL point-to-point lanes] in process_group_nccl_comms.cpp.
enum NcclLane : int { kCollectiveLane = 0, kUpLane = 1, kDownLane = 2, kNumLanes = 3 };

// The collective lane is made with the group (on its first call); the two point-to-point
// lanes only on the first send or recv (see Note [NCCL point-to-point lanes]).
struct ProcessGroupNccl::Comms {
  int device = -1;
  Lane lanes[kNumLanes];
  float* scratch = nullptr;
  // Made with the point-to-point lanes (see connect_p2p): four floats on the device for the
  // connecting messages.
  float* p2p_scratch = nullptr;
  // Under launch_mu_: the point-to-point lanes were attempted (a failed attempt breaks the
  // group, since its rendezvous keys in the store cannot be used twice).
  bool p2p_tried = false;
};

// See Note [NCCL Work::wait]: wait() makes the caller's current stream wait for `end`
// and returns; the event belongs to the work (the watchdog only queries it).
class NcclWork final : public Work {
 public:
  NcclWork(std::string desc, int device, bool host_blocking)
      : Work(std::move(desc)), device_(device), host_blocking_(host_blocking) {}
  ~NcclWork() override {
    if (end_) cudaEventDestroy(end_);  // no throw; fails harmlessly after CUDA shut down
  }
  void wait() override;
  // Created before the launch issues anything, so a failure there leaks nothing.
  void create_end_event(const std::string& what);
  cudaEvent_t end() const { return end_; }

 private:
  int device_;
  bool host_blocking_;  // barrier(): the host itself must wait
  cudaEvent_t end_ = nullptr;
};

struct ProcessGroupNccl::Launch {
  OpKind kind;
  std::string desc, peers;
  std::shared_ptr<NcclWork> work;
  std::vector<Tensor> keep;    // alive until `end` fires (see Note [NCCL stream ordering])
  cudaEvent_t end = nullptr;   // owned by `work`
  int lane = kCollectiveLane;  // whose communicator is polled for asynchronous errors
  detail::Clock::time_point deadline;
  int64_t sent = 0, received = 0;
  // Set when `issue` threw after possibly queueing work: the Work fails once `end` fires.
  std::exception_ptr error;
  uint64_t trace_id = 0;   // its async span on the trace (category "nccl"); 0: not traced
  uint64_t flight_id = 0;  // its flight-recorder entry (dist/flight/)
};

namespace detail {

inline void check_cuda(cudaError_t err, const char* call, const std::string& what, const char* file, int line) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error
  ::ddl::detail::throw_error(
      file, line,
      ::ddl::detail::str_cat(what, ": CUDA call ", call, " failed: ", cudaGetErrorString(err), " (", int(err), ")"));
}

// What DDL_NCCL_CHECK throws: the message and NCCL's result, which tells a call NCCL refused
// (an argument error: the communicator stays usable) from a failure (see Note [NCCL errors
// in a launch] in process_group_nccl.cpp).
class NcclCallError final : public ::ddl::Error {
 public:
  NcclCallError(const std::string& msg, ncclResult_t result) : Error(msg), result_(result) {}
  ncclResult_t result() const { return result_; }
  bool argument_error() const { return result_ == ncclInvalidArgument || result_ == ncclInvalidUsage; }

 private:
  ncclResult_t result_;
};

inline void check_nccl(ncclResult_t res, ncclComm_t comm, const char* call, const std::string& what) {
  if (res == ncclSuccess) return;
  const char* last = ncclGetLastError(comm);
  throw NcclCallError(::ddl::detail::str_cat(what, ": ", call, " failed: ", ncclGetErrorString(res), " (", int(res),
                                             ")", last && *last ? ": " : "", last ? last : ""),
                      res);
}

#define DDL_NCCL_CUDA(expr, what) ::ddl::dist::detail::check_cuda((expr), #expr, (what), __FILE__, __LINE__)
#define DDL_NCCL_CHECK(expr, comm, what) ::ddl::dist::detail::check_nccl((expr), (comm), #expr, (what))

// Makes `device` current for the guard's lifetime.
class NcclDeviceGuard {
 public:
  explicit NcclDeviceGuard(int device) {
    DDL_NCCL_CUDA(cudaGetDevice(&previous_), "ProcessGroupNccl");
    if (previous_ != device) DDL_NCCL_CUDA(cudaSetDevice(device), "ProcessGroupNccl");
  }
  ~NcclDeviceGuard() {
    int now = -1;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }
  NcclDeviceGuard(const NcclDeviceGuard&) = delete;
  NcclDeviceGuard& operator=(const NcclDeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// ncclGroupStart/End around grouped sends and receives; the group is closed even when a
// call inside throws, so later NCCL calls are not swallowed into a dangling group.
class NcclGroup {
 public:
  NcclGroup(ncclComm_t comm, const std::string& what) : comm_(comm), what_(what) {
    DDL_NCCL_CHECK(ncclGroupStart(), comm_, what_);
  }
  ~NcclGroup() {
    if (open_) ncclGroupEnd();
  }
  void end() {
    open_ = false;
    DDL_NCCL_CHECK(ncclGroupEnd(), comm_, what_);
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

 private:
  ncclComm_t comm_;
  const std::string& what_;
  bool open_ = true;
};

}  // namespace detail

}  // namespace ddl::dist
