// ProcessGroupNccl: the CUDA backend (built when meson finds NCCL). One communicator per
// group on the tensors' GPU for collectives, created on the first call (rank 0's unique id
// travels through the Store), plus two for point-to-point, created on the first send or
// recv; work runs on the group's own streams, which first wait for the caller's current
// stream, so launching never blocks the host, and Work::wait() makes the caller's stream
// wait in turn (barrier() blocks the host). A watchdog thread completes each Work when its
// end event fires, or aborts the communicators at the timeout. CUDA tensors only: CPU
// tensors belong to gloo. DDL_DEBUG checks each collective through the Store first. See
// docs/dist.md, "The nccl backend".
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ddl/dist/process_group.h>
#include <ddl/dist/store/store.h>

namespace ddl::dist {
namespace flight {
class GroupRecorder;
}

struct NcclOptions {
  Millis timeout = configured_timeout();  // rendezvous, and each operation from launch to completion
  // >= 0: create the communicator now, on this GPU. -1: on the first call, on its tensors'
  // GPU (barrier() before any tensor uses LOCAL_RANK modulo the GPU count).
  int device = -1;
  int debug = -1;  // DDL_DEBUG checks: 1 on, 0 off, -1 read the DDL_DEBUG variable
};

class ProcessGroupNccl final : public ProcessGroup {
 public:
  // Throws ddl::Error at once when no GPU is usable. Give each group its own PrefixStore.
  ProcessGroupNccl(std::shared_ptr<Store> store, int rank, int size, NcclOptions opts = {});
  // Waits (up to the timeout) for launched work, then destroys the communicators.
  ~ProcessGroupNccl() override;
  std::string backend() const override { return "nccl"; }

  std::shared_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> broadcast_async(const Tensor& t, int root) override;
  std::shared_ptr<Work> reduce_async(const Tensor& t, int root, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> all_gather_async(const Tensor& output, const Tensor& input) override;
  std::shared_ptr<Work> reduce_scatter_async(const Tensor& output, const Tensor& input,
                                             ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> gather_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> scatter_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> all_to_all_async(const Tensor& output, const Tensor& input) override;
  // Completes (Work::wait blocks the host until then) once every rank has reached it and this
  // rank's earlier collectives are done. Sends and receives are not covered: wait on their
  // Work. See Note [NCCL barrier].
  std::shared_ptr<Work> barrier_async() override;
  // NCCL matches point-to-point calls per peer and direction in posting order: the tag is
  // checked (>= 0) but not used. See Note [NCCL point-to-point lanes] for which orders work.
  std::shared_ptr<Work> send_async(const Tensor& t, int dst, int tag = 0) override;
  std::shared_ptr<Work> recv_async(const Tensor& t, int src, int tag = 0) override;

  CommStats stats() const override;
  void reset_stats() override;
  bool is_broken() const override;
  std::string broken_reason() const override;
  Millis timeout() const { return opts_.timeout; }
  bool debug_checks() const { return debug_; }
  // The GPU this group communicates on; -1 before the first call.
  int device() const;

  struct Lane;    // a communicator and the stream its work runs on (CUDA types stay in the .cpp)
  struct Comms;   // the device and its lanes: collectives, sends up, sends down
  struct Launch;  // one launched operation, until its end event fires

 private:
  // An operand as the caller passed it; `written`: a non-contiguous one gets the result back.
  struct Operand {
    Tensor t;  // may be undefined (a non-root's missing input or output)
    bool written = false;
  };
  // `bufs`: the operands' contiguous buffers, in order (the operand itself when contiguous).
  using IssueFn = std::function<void(const Lane&, const std::vector<Tensor>& bufs, const std::string& what)>;
  // Orders the lane after the caller's current stream, stages non-contiguous operands into
  // contiguous buffers on it, runs `issue` on it, copies staged results back into written
  // operands on it, and hands the end event to the watchdog.
  // `fingerprint` is what DDL_DEBUG compares across ranks ("all_reduce(float32 x 10, sum)");
  // collectives pass one, send/recv pass "" (they are not checked).
  std::shared_ptr<Work> launch(OpKind kind, std::string desc, const std::string& fingerprint, std::string peers,
                               int device, int lane, std::vector<Operand> operands, int64_t sent, int64_t received,
                               const IssueFn& issue);
  std::shared_ptr<Work> p2p(OpKind kind, const Tensor& t, int peer, int tag);
  // For empty tensors: nothing to launch, but a collective is still DDL_DEBUG-checked.
  std::shared_ptr<Work> finished_work(const std::string& desc, const std::string& fingerprint);
  // With DDL_DEBUG on and a fingerprint: checks through the store that every rank makes
  // this call (see Note [DDL_DEBUG through the store]); throws ddl::Error when they differ,
  // and breaks the group when a rank never arrives. Returns a lock on debug_mu_ (empty when
  // nothing was checked) to hold until the launch, so the checks run in launch order.
  std::unique_lock<std::mutex> debug_check(const std::string& fingerprint, const std::string& desc);
  // The communicators' device, else opts.device, else LOCAL_RANK modulo the GPU count.
  int default_device() const;
  // The communicators on `device`, created on first use (a collective: every rank calls it);
  // with `p2p`, also the two point-to-point lanes (on the first send or recv: every rank
  // must make one; see Note [NCCL point-to-point lanes]).
  Comms& comms_for(int device, const std::string& desc, bool p2p = false);
  // Rank 0's NCCL unique ids (`n` of them) through the store under `key`, then a check-in of
  // every rank, so the blocking ncclCommInitRank that follows starts only once all are alive.
  void exchange_unique_ids(const std::string& key, void* ids, size_t bytes, const std::string& what);
  // Creates lanes [first, last) of `c` from `ids` (one per lane, from exchange_unique_ids).
  void init_lanes(Comms& c, int first, int last, const void* ids, const std::string& what);
  // Connects every pair of ranks on the point-to-point lanes (one small message each way),
  // right after they were created; throws past the timeout. See Note [NCCL point-to-point lanes].
  void connect_p2p(Comms& c, const std::string& what);
  // Hands `l` to the watchdog; when the group broke meanwhile (abort_all may already have
  // failed the pending work and freed the communicators), fails and parks it instead.
  void enqueue(std::unique_ptr<Launch> l);
  // True when lane `lane`'s communicator reports an asynchronous failure (NCCL's message in
  // *why). An aborted communicator is freed: once abort_all has nulled it, it is never polled.
  bool lane_failed(int lane, std::string* why);
  void watchdog_loop();
  // Wakes the watchdog to abort the communicators (the group is already marked broken).
  void request_abort();
  // Called after letting go of launch_mu_: requests the abort that abort_all could not do
  // while this thread held it (see Note [NCCL abort]).
  void abort_if_pending();
  // Fails l's Work with `why` and keeps l (and its tensors) until the group is destroyed.
  void park(std::unique_ptr<Launch> l, const std::string& why);
  // Records the first failure, aborts the communicators (only under launch_mu_, else once
  // its holder lets go: see Note [NCCL abort]) and fails every pending Work.
  void abort_all(const std::string& why);
  std::string mark_broken(const std::string& what);
  void check_usable(const std::string& desc) const;

  std::shared_ptr<Store> store_;
  std::unique_ptr<flight::GroupRecorder> flight_;  // dist/flight/: the last operations, for dumps
  NcclOptions opts_;
  const bool debug_;              // DDL_DEBUG checks on
  std::mutex debug_mu_;           // held from a collective's check until its launch
  int64_t debug_seq_ = 0;         // guarded by debug_mu_: the number of the next checked collective
  std::unique_ptr<Comms> comms_;  // set once, on the launching thread; see comms_for
  std::timed_mutex launch_mu_;    // one launch at a time: NCCL calls on a comm are not thread-safe
  // Guards comms_ and the lanes' communicators between their creation, their use and abort_all
  // (which cannot always take launch_mu_); taken before state_mu_, never held during a launch.
  std::mutex comm_mu_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Launch>> pending_;   // in launch order
  std::vector<std::unique_ptr<Launch>> aborted_;  // guarded by mu_; their tensors stay alive until destruction
  bool stop_ = false;
  bool abort_requested_ = false;            // guarded by mu_; see request_abort
  std::atomic<bool> abort_pending_{false};  // abort_all found launch_mu_ held; see abort_if_pending
  std::thread watchdog_;

  mutable std::mutex state_mu_;
  CommStats stats_;
  std::string broken_;
  std::string abort_note_;  // the first abort_all's: whether it aborted; see Note [NCCL abort]
};

}  // namespace ddl::dist
