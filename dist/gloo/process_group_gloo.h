// ProcessGroupGloo: the CPU backend. Rendezvous through a Store builds a full mesh of
// Gloo TCP pairs; collectives run one at a time, in call order, on a worker thread fed by
// a queue (so async calls return at once and every rank issues the same sequence);
// send/recv are posted directly and completed by a second thread. After a transport error
// (a peer died, a timeout) the group is broken: it closes its connections, so peers fail
// fast too, and every later call throws the first error. See docs/dist.md.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <ddl/dist/process_group.h>
#include <ddl/dist/store/store.h>
#include <ddl/dist/traffic.h>

namespace gloo {
class Context;
namespace transport {
class UnboundBuffer;
}
}  // namespace gloo

namespace ddl::dist {
namespace flight {
class GroupRecorder;
}
namespace detail {
struct GlooCall;
class ShmAllReduce;
}  // namespace detail

struct GlooOptions {
  Millis timeout = configured_timeout();  // per operation, and for connecting (DDL_TIMEOUT)
  // The address peers use to reach this rank: an IP ("10.0.0.5"), or a host name that
  // resolves to one. Empty: 127.0.0.1. Never rely on /etc/hosts mapping your host name.
  std::string hostname;
  std::string iface;  // or a network interface ("eth0", "ib0"); wins over hostname
  int debug = -1;     // DDL_DEBUG checks: 1 on, 0 off, -1 read the DDL_DEBUG variable
  // all_reduce through shared memory when every rank is on this host: 1 on, 0 off, -1 read
  // DDL_SHM (default on). Other collectives and send/recv always use TCP.
  int shm = -1;
  // Set-up ends by this deadline when set (init_process_group's one deadline for the whole
  // rendezvous, store connection included), else `timeout` from the constructor's call.
  std::chrono::steady_clock::time_point deadline{};
};

class ProcessGroupGloo final : public ProcessGroup {
 public:
  // Connects to the other size-1 ranks through `store` (give each group its own
  // PrefixStore). Throws ddl::Error if they do not all arrive within opts.timeout.
  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, GlooOptions opts = {});
  ~ProcessGroupGloo() override;  // fails queued work, waits for the running op, disconnects
  std::string backend() const override { return "gloo"; }

  std::shared_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> broadcast_async(const Tensor& t, int root) override;
  std::shared_ptr<Work> reduce_async(const Tensor& t, int root, ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> all_gather_async(const Tensor& output, const Tensor& input) override;
  std::shared_ptr<Work> reduce_scatter_async(const Tensor& output, const Tensor& input,
                                             ReduceOp op = ReduceOp::Sum) override;
  std::shared_ptr<Work> gather_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> scatter_async(const Tensor& output, const Tensor& input, int root) override;
  std::shared_ptr<Work> all_to_all_async(const Tensor& output, const Tensor& input) override;
  std::shared_ptr<Work> barrier_async() override;
  std::shared_ptr<Work> send_async(const Tensor& t, int dst, int tag = 0) override;
  std::shared_ptr<Work> recv_async(const Tensor& t, int src, int tag = 0) override;

  CommStats stats() const override;
  void reset_stats() override;
  bool is_broken() const override;
  std::string broken_reason() const override;
  Millis timeout() const { return opts_.timeout; }
  bool debug_checks() const { return debug_; }
  // "tcp", or "tcp; all_reduce through shared memory"; shm_status() says why not when not.
  std::string transport() const;
  const std::string& shm_status() const { return shm_status_; }
  // Whether shm_status() is an error (the segment could not be made or mapped) rather than
  // the set-up (DDL_SHM=0, ranks on different hosts).
  bool shm_failed() const { return shm_failed_; }

 private:
  using RunFn = std::function<detail::Traffic(const detail::GlooCall&)>;
  struct Task {
    OpKind kind;
    std::string desc;         // "all_reduce(float32[1000], sum)"
    std::string fingerprint;  // what must match across ranks (DDL_DEBUG)
    std::string peers;        // who this rank talks to, for error messages
    RunFn run;
    std::shared_ptr<Work> work;
  };
  struct P2P {
    OpKind kind;
    std::string desc;
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    Tensor staged, target;  // recv into staged, then copy to target when they differ
    int peer;
    uint64_t id = 0;  // key in p2p_pending_
    uint64_t flight_id = 0;
    std::shared_ptr<Work> work;
  };

  std::shared_ptr<Work> enqueue(OpKind kind, std::string desc, std::string fingerprint, std::string peers, RunFn run);
  std::shared_ptr<Work> post_p2p(OpKind kind, const Tensor& t, int peer, int tag);
  void worker_loop();
  void execute(Task& task);
  void debug_check(const Task& task, const detail::GlooCall& call);
  void p2p_loop();
  // Records the first transport failure and closes the connections (peers then fail fast).
  std::string mark_broken(const std::string& what);
  void count(OpKind kind, const detail::Traffic& t);
  void check_usable(const std::string& desc) const;
  // Liveness, for messages: when an operation with each rank last completed.
  void heard_from(int peer);
  void heard_from_all();
  std::string last_heard(int peer) const;  // "last heard from rank 1 (host 10.0.0.2) 31.2 s ago, at 10:41:07 UTC"
  // What this group is doing now, for the Gloo abort message (never blocks).
  std::string describe_in_flight() const;

  GlooOptions opts_;
  bool debug_ = false;
  std::shared_ptr<gloo::Context> ctx_;
  std::unique_ptr<detail::ShmAllReduce> shm_;  // null: all_reduce runs Gloo's TCP ring
  std::string shm_status_;
  bool shm_failed_ = false;
  uint32_t seq_ = 0;  // worker thread only: the tag of the next collective

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  std::deque<P2P> p2p_queue_;
  gloo::transport::UnboundBuffer* p2p_current_ = nullptr;  // the one p2p_loop waits on
  bool stop_ = false;
  std::thread worker_;
  std::thread p2p_worker_;

  mutable std::mutex state_mu_;
  CommStats stats_;
  std::string broken_;
  const Task* running_ = nullptr;                // the collective in progress (the worker owns it)
  std::map<uint64_t, std::string> p2p_pending_;  // posted sends/recvs not yet completed
  uint64_t next_p2p_id_ = 0;

  std::unique_ptr<std::atomic<int64_t>[]> last_heard_;  // per rank: steady-clock ns
  int in_flight_id_ = -1;                               // registration with gloo_abort.h
  std::unique_ptr<flight::GroupRecorder> flight_;       // dist/flight/: the last operations, for dumps
};

}  // namespace ddl::dist
