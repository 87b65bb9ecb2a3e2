// DistributedDataParallel: wraps a module so that backward leaves every
// parameter's gradient averaged over the process group, with the all-reduce
// of each gradient bucket overlapping the rest of backward (see Note [Buckets]
// in ddp.cpp). Parameters are named "module.<name>", as in PyTorch. A communication
// hook (dist/hooks/comm_hook.h) may replace the all-reduce; a Join (dist/hooks/join.h)
// lets ranks with fewer batches finish (ddp_join.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ddl/dist/hooks/comm_hook.h>
#include <ddl/dist/hooks/join.h>
#include <ddl/dist/process_group.h>
#include <ddl/nn/module.h>

namespace ddl::dist {

struct DDPOptions {
  double bucket_cap_mb = 25;      // later buckets
  double first_bucket_mb = 1;     // the first bucket is small so communication starts early
  bool broadcast_buffers = true;  // rank 0's buffers (BatchNorm statistics) before each training forward
  // Tolerate parameters that get no gradient: where some rank used one, the others add the
  // .grad they hold (zeros after zero_grad) to the average; where no rank did, its .grad is
  // left untouched (see Note [Unused parameters] in ddp.cpp).
  bool find_unused_parameters = false;
};

// What DDP did, for reports.
struct DDPStats {
  std::vector<int64_t> bucket_bytes;  // in launch order
  std::vector<size_t> bucket_params;  // parameters per bucket
  double last_wait_ms = 0;            // time the last backward spent waiting for all-reduces
  double total_wait_ms = 0;
  double last_broadcast_ms = 0;  // time the last forward spent broadcasting rank 0's buffers
  double total_broadcast_ms = 0;
  // Time the last backward spent filling buckets: copying (and scaling) gradients into them
  // and launching each bucket's hook (bench/dist_bench.cpp's ddp-step reports it).
  double last_fill_ms = 0;
  int64_t synced_steps = 0;
};

class DistributedDataParallel : public nn::Module, public Joinable {
 public:
  // Broadcasts rank 0's parameters and buffers so every replica starts identical.
  DistributedDataParallel(std::shared_ptr<nn::Module> module, std::shared_ptr<ProcessGroup> group,
                          DDPOptions opts = {});
  ~DistributedDataParallel() override;

  Variable forward(const Variable& x) override;
  // Averages each bucket through `hook` instead of the built-in average (gradients scaled by
  // 1/world as they are copied, then a sum all-reduce: hooks::allreduce_hook's bits in one
  // pass fewer); `hook` gets the gradients undivided, as in PyTorch's register_comm_hook (the
  // hook's state lives in its closure). Once, before the first backward.
  void register_comm_hook(CommHook hook);
  // Joinable (see dist/hooks/join.h and Note [Join divisor] in ddp_join.cpp).
  std::unique_ptr<JoinHook> join_hook(const JoinOptions& opts) override;
  ProcessGroup& join_process_group() override { return *group_; }
  const std::shared_ptr<nn::Module>& module() const { return module_; }
  ProcessGroup& group() const { return *group_; }
  const DDPStats& stats() const { return stats_; }
  // Buckets whose all-reduce this backward has launched so far (read from a gradient hook
  // to watch communication start while backward goes on), and how many of the last synced
  // backward's buckets were launched from gradient hooks, before its end-of-backward callback.
  size_t buckets_launched() const { return next_launch_; }
  size_t last_overlapped_buckets() const { return overlapped_buckets_; }

  // While a NoSync guard lives, backward only accumulates local gradients; the
  // next synchronised backward averages the accumulated sum (gradient accumulation).
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp) : ddp_(ddp), prev_(ddp.sync_) { ddp.sync_ = false; }
    ~NoSync() { ddp_.sync_ = prev_; }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool prev_;
  };

 private:
  struct Bucket {
    Tensor flat;                       // all slots, contiguous
    std::vector<size_t> params;        // parameter indices, in slot order
    std::vector<Tensor> views;         // slot k viewed as parameter k's shape
    size_t pending = 0;                // slots not yet filled in this backward
    std::optional<HookFuture> future;  // this backward's communication
  };
  void build_buckets(const DDPOptions& opts);
  void on_grad_ready(size_t param_index);
  // slot = grad · (1/divisor_) in one pass, or grad alone for a registered hook. See
  // Note [Fused scale] in ddp.cpp.
  void fill_slot(const Tensor& slot, const Tensor& grad);
  void launch_ready_buckets();
  void finish_backward();
  void broadcast_coalesced(const std::vector<Tensor>& tensors, int root = 0);
  void broadcast_buffers(int root);
  GradBucket grad_bucket(size_t k) const;
  // ddp_join.cpp: the forward of a rank still training under Join, what a joined rank
  // shadows per iteration, and the final agreement on the weights.
  void join_pre_forward();
  void join_shadow_iteration();
  void join_sync_final_model(bool is_last_joiner);
  int join_common_rank(bool candidate);
  friend class DDPJoinHook;

  std::shared_ptr<nn::Module> module_;
  std::shared_ptr<ProcessGroup> group_;
  DDPOptions opts_;
  std::vector<Variable> params_;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::vector<size_t> bucket_of_;   // parameter index -> bucket
  std::vector<int64_t> offset_of_;  // parameter index -> offset in its bucket
  std::vector<int> hook_ids_;
  std::vector<bool> ready_;            // this backward: has the parameter's gradient arrived
  std::vector<bool> used_since_sync_;  // any backward since the last synchronised one (no_sync too)
  size_t next_launch_ = 0;
  size_t overlapped_buckets_ = 0;  // see last_overlapped_buckets()
  bool in_backward_ = false;
  bool sync_ = true;
  DDPStats stats_;
  CommHook hook_;
  bool hook_registered_ = false;
  double divisor_ = 1;                           // GradBucket::divisor: the world size, or see Join
  bool divide_by_initial_world_size_ = true;     // set by join_hook
  std::vector<const char*> bucket_trace_names_;  // "bucket k", interned for the timeline
  uint64_t trace_launches_ = 0;                  // async-span ids: one per launch
};

}  // namespace ddl::dist
