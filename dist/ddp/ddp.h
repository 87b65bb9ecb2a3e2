// DistributedDataParallel: wraps a module so that backward leaves every
// parameter's gradient averaged over the process group, with the all-reduce
// of each gradient bucket overlapping the rest of backward (see Note [Buckets]
// in ddp.cpp). Parameters are named "module.<name>", as in PyTorch.
#pragma once

#include <memory>
#include <string>
#include <vector>

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
  int64_t synced_steps = 0;
};

class DistributedDataParallel : public nn::Module {
 public:
  // Broadcasts rank 0's parameters and buffers so every replica starts identical.
  DistributedDataParallel(std::shared_ptr<nn::Module> module, std::shared_ptr<ProcessGroup> group,
                          DDPOptions opts = {});
  ~DistributedDataParallel() override;

  Variable forward(const Variable& x) override;
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
  struct Bucket;
  void build_buckets(const DDPOptions& opts);
  void on_grad_ready(size_t param_index);
  void launch_ready_buckets();
  void finish_backward();
  void broadcast_coalesced(const std::vector<Tensor>& tensors);

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
  std::vector<const char*> bucket_trace_names_;  // "bucket k", interned for the timeline
  uint64_t trace_launches_ = 0;                  // async-span ids: one per launch
};

}  // namespace ddl::dist
