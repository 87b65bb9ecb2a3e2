// dist/zero/: ZeRO stages 1 and 2 (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations
// Toward Training Trillion Parameter Models"). This file: the machinery both the
// ZeroRedundancyOptimizer and the zero1/zero2 sync strategies use — the partition of the
// parameters into buckets and per-rank chunks, the gradient reduce-scatter, the parameter
// all-gather, and moving optimizer state between its sharded and its whole form.
// It does not shard the parameters themselves (that is stage 3, FSDP). See docs/sharded.md.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <ddl/dist/process_group.h>
#include <ddl/optim/optimizer.h>

namespace ddl::dist {

// Bytes of training state this rank holds, as allocated now (and gradients at their peak).
struct ZeroMemory {
  int64_t params = 0;           // every parameter (stages 1 and 2 keep them whole)
  int64_t grads = 0;            // parameter .grad tensors plus the reduced shard, now
  int64_t peak_grads = 0;       // the most gradient bytes held at once since reset_peak()
  int64_t optimizer_state = 0;  // the local optimizer's state (this rank's shard only)
};

namespace detail {

// Note [ZeRO partition]
// Parameters, in reverse registration order (the order backward produces gradients in),
// are packed into buckets of at most bucket_bytes (a larger parameter is a bucket alone);
// a bucket never mixes parameter groups. A bucket of n elements is padded to world·c,
// c = ceil(n / world), and rank r owns elements [r·c, (r+1)·c) of it: one reduce-scatter
// and one all-gather per bucket, every rank's share within c elements of every other's.
// The partition depends only on shapes, groups, bucket_bytes and world size.
struct ZeroBucket {
  int group = 0;
  std::vector<size_t> params{};    // indices into the flat parameter list
  std::vector<int64_t> offsets{};  // each parameter's first element in the bucket
  int64_t numel = 0;               // real elements
  int64_t chunk = 0;               // each rank's share, ceil(numel / world)
  int64_t shard_offset = 0;        // where this rank's chunk sits in the shard gradient buffer
};

// A piece of one parameter that this rank owns: what its local optimizer steps.
struct ZeroPiece {
  size_t param = 0;
  size_t bucket = 0;
  int64_t param_offset = 0;  // first element within the (flattened) parameter
  int64_t length = 0;
  int64_t shard_offset = 0;  // first element within the shard gradient buffer
  Variable var{};            // a view of the parameter's values; its grad a view of the shard
};

class ZeroShards {
 public:
  // groups: the parameters, by optimizer group. stage 1 or 2. Broadcasts nothing.
  ZeroShards(std::vector<std::vector<Variable>> groups, std::shared_ptr<ProcessGroup> group, int stage,
             int64_t bucket_bytes);
  ~ZeroShards();
  ZeroShards(const ZeroShards&) = delete;
  ZeroShards& operator=(const ZeroShards&) = delete;

  int stage() const { return stage_; }
  ProcessGroup& group() { return *group_; }
  // This rank's pieces, grouped as the parameters are: the local optimizer's parameters.
  std::vector<std::vector<Variable>> local_groups() const;
  const std::vector<ZeroBucket>& buckets() const { return buckets_; }
  const std::vector<ZeroPiece>& pieces() const { return pieces_; }

  // Averages the gradients over ranks into this rank's shard (buckets not yet reduced
  // during backward, stage 2, are reduced here) and waits for every bucket.
  // A no-op when they were reduced since the last gather_parameters().
  void reduce_gradients();
  // Every rank's updated pieces → every rank's parameters (one all-gather per bucket).
  void gather_parameters();

  // The whole state `local` (built on local_groups()) holds, as one process stepping every
  // parameter would: collective; filled on to_rank only (to_rank < 0: on every rank).
  std::vector<std::pair<std::string, Tensor>> whole_state(const optim::Optimizer& local, int to_rank);
  // local ← this rank's share of `whole` (state tensors named as one process's).
  void load_whole_state(optim::Optimizer& local, const std::vector<std::pair<std::string, Tensor>>& whole);

  ZeroMemory memory(const optim::Optimizer* local) const;
  void reset_peak() { peak_grads_ = 0; }

 private:
  void on_grad_ready(size_t i);
  void launch_bucket(size_t b);
  void finish_oldest();
  void note_grad_bytes();

  std::shared_ptr<ProcessGroup> group_;
  int stage_;
  std::vector<Variable> params_;
  std::vector<int> group_of_;
  std::vector<ZeroBucket> buckets_;
  std::vector<size_t> bucket_of_;
  std::vector<ZeroPiece> pieces_;
  TensorOptions options_;  // the parameters' dtype and device
  // Stage 2: this rank's chunk of every bucket, reduced (see Note [ZeRO partition]). Stage 1
  // writes the reduced chunk into the parameters' own gradients instead.
  Tensor shard_grad_;
  // Stage 2: gradients seen this backward, buckets launched, reduce-scatters in flight.
  std::vector<bool> ready_;
  std::vector<int64_t> pending_;
  size_t next_launch_ = 0;
  struct InFlight {
    std::shared_ptr<Work> work;
    Tensor flat, out;
    size_t bucket = 0;
  };
  std::vector<InFlight> in_flight_;
  std::vector<int> hook_ids_;
  int64_t peak_grads_ = 0;
  size_t num_groups_ = 0;
  bool reduced_ = false;
};

}  // namespace detail
}  // namespace ddl::dist
