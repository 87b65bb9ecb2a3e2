// ProcessGroup: the collectives every backend offers, on tensors of any device the
// backend supports (gloo: CPU; nccl: CUDA, in the CUDA build). Every call has an
// asynchronous form returning a Work handle and a blocking form that waits on it.
// All ranks must issue the same collectives in the same order (DDL_DEBUG=1 checks it).
// Tensors are updated in place; non-contiguous tensors are handled through a copy.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <ddl/dist/store/store.h>
#include <ddl/dist/work.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::dist {

enum class ReduceOp : uint8_t { Sum, Avg, Max, Min };
const char* reduce_op_name(ReduceOp op);

// What the byte counters are kept per.
enum class OpKind : uint8_t {
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  Gather,
  Scatter,
  AllToAll,
  Barrier,
  Send,
  Recv,
  DebugCheck,
};
inline constexpr int kNumOpKinds = 12;
const char* op_kind_name(OpKind k);

// Bytes this rank put on / took off the wire, as the algorithm moves them (see
// docs/dist.md, "Byte counters"): payload only, no headers, no local copies.
struct OpStats {
  int64_t calls = 0;
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
};

struct CommStats {
  std::array<OpStats, kNumOpKinds> ops{};
  OpStats& operator[](OpKind k) { return ops[static_cast<int>(k)]; }
  const OpStats& operator[](OpKind k) const { return ops[static_cast<int>(k)]; }
  int64_t bytes_sent() const;
  int64_t bytes_received() const;
  // One line per kind with calls > 0: "all_reduce: 12 calls, sent 1.2 MB, received 1.2 MB".
  std::string summary() const;
};

class ProcessGroup {
 public:
  ProcessGroup(int rank, int size);
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend() const = 0;

  // ---- asynchronous forms: enqueue and return at once ----
  // Keep the tensors alive and untouched until the Work completes.
  // t ← op over all ranks' t. Avg is for floating dtypes.
  virtual std::shared_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op = ReduceOp::Sum) = 0;
  // t ← root's t.
  virtual std::shared_ptr<Work> broadcast_async(const Tensor& t, int root) = 0;
  // root's t ← op over all ranks' t; other ranks' t is left unchanged.
  virtual std::shared_ptr<Work> reduce_async(const Tensor& t, int root, ReduceOp op = ReduceOp::Sum) = 0;
  // output (numel = size()·input.numel()) ← every rank's input, rank 0's first.
  virtual std::shared_ptr<Work> all_gather_async(const Tensor& output, const Tensor& input) = 0;
  // output ← op over all ranks of chunk rank() of input (input.numel() = size()·output.numel()).
  virtual std::shared_ptr<Work> reduce_scatter_async(const Tensor& output, const Tensor& input,
                                                     ReduceOp op = ReduceOp::Sum) = 0;
  // Root's output (size()·input.numel()) ← every rank's input. Non-roots may pass Tensor().
  virtual std::shared_ptr<Work> gather_async(const Tensor& output, const Tensor& input, int root) = 0;
  // output ← chunk rank() of root's input (size()·output.numel()). Non-roots may pass Tensor().
  virtual std::shared_ptr<Work> scatter_async(const Tensor& output, const Tensor& input, int root) = 0;
  // Chunk j of output ← chunk rank() of rank j's input; both hold size() equal chunks.
  virtual std::shared_ptr<Work> all_to_all_async(const Tensor& output, const Tensor& input) = 0;
  // Completes once every rank has reached it and this rank's earlier collectives are done.
  // Sends and receives are not covered (wait on their Work), so a receive whose send the
  // peer posts after its own barrier still completes.
  virtual std::shared_ptr<Work> barrier_async() = 0;
  // Point to point: matched by (peer, tag). They bypass the collective queue, so a send
  // and its recv may be posted in any order relative to collectives, barrier included.
  virtual std::shared_ptr<Work> send_async(const Tensor& t, int dst, int tag = 0) = 0;
  virtual std::shared_ptr<Work> recv_async(const Tensor& t, int src, int tag = 0) = 0;

  // ---- blocking forms ----
  void all_reduce(const Tensor& t, ReduceOp op = ReduceOp::Sum) { all_reduce_async(t, op)->wait(); }
  void broadcast(const Tensor& t, int root) { broadcast_async(t, root)->wait(); }
  void reduce(const Tensor& t, int root, ReduceOp op = ReduceOp::Sum) { reduce_async(t, root, op)->wait(); }
  void all_gather(const Tensor& output, const Tensor& input) { all_gather_async(output, input)->wait(); }
  void reduce_scatter(const Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::Sum) {
    reduce_scatter_async(output, input, op)->wait();
  }
  void gather(const Tensor& output, const Tensor& input, int root) { gather_async(output, input, root)->wait(); }
  void scatter(const Tensor& output, const Tensor& input, int root) { scatter_async(output, input, root)->wait(); }
  void all_to_all(const Tensor& output, const Tensor& input) { all_to_all_async(output, input)->wait(); }
  void barrier() { barrier_async()->wait(); }
  void send(const Tensor& t, int dst, int tag = 0) { send_async(t, dst, tag)->wait(); }
  void recv(const Tensor& t, int src, int tag = 0) { recv_async(t, src, tag)->wait(); }

  // ---- health and accounting ----
  virtual CommStats stats() const = 0;
  virtual void reset_stats() = 0;
  // After a transport failure (peer died, timeout) the group is broken: every later call
  // throws broken_reason(). Recreate the group (or restart the job) to go on.
  virtual bool is_broken() const = 0;
  virtual std::string broken_reason() const = 0;
  // "[rank r/N]": the prefix for log lines.
  std::string log_prefix() const;

 protected:
  // Checks a send/recv's peer and tag (every backend alike) and returns the
  // description errors and Work handles use, e.g. "send(<tensor>, to rank 1, tag=0)".
  std::string p2p_description(OpKind kind, const Tensor& t, int peer, int tag) const;

 private:
  int rank_;
  int size_;
};

}  // namespace ddl::dist
