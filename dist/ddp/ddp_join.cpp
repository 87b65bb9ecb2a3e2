// DistributedDataParallel as a Joinable (dist/hooks/join.h): what a rank still training
// adds to its forward, what a joined rank shadows, and the final agreement on weights.
//
// Note [Join divisor]
// Per iteration, in this order on every rank (PyTorch's DDP under Join does the same):
//   1. Join's all-reduce: 1 from each rank still training, 0 from each joined rank;
//   2. with broadcast_buffers and buffers: the highest rank still training broadcasts them;
//   3. a sum saying whether the ranks still training will synchronise this backward
//      (0 under no_sync): the joined ranks then shadow or skip step 4;
//   4. one hook call per bucket, in bucket order; a joined rank's buckets hold zeros.
// So with A of the W ranks still training, the sum of a bucket is the sum of the A ranks'
// gradients. It is divided by W (divide_by_initial_world_size = true, the default: every
// sample weighs the same, the step is A/W of an even one) or by A (false: the average over
// the ranks that had data, as training on A ranks would). The divisor reaches the hook as
// GradBucket::divisor. Joined ranks skip their optimizer's steps, so when all have joined
// the ranks agree on the model of the highest-numbered rank among those that joined last
// (they trained every step) and broadcast it, as PyTorch's _sync_final_model.
// tests/golden/join.py checks this reading of the divisor against PyTorch 1.13's Join.
#include <ddl/dist/ddp/ddp.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::dist {

class DDPJoinHook final : public JoinHook {
 public:
  explicit DDPJoinHook(DistributedDataParallel& ddp) : ddp_(ddp) {}
  void main_hook() override { ddp_.join_shadow_iteration(); }
  void post_hook(bool is_last_joiner) override { ddp_.join_sync_final_model(is_last_joiner); }

 private:
  DistributedDataParallel& ddp_;
};

std::unique_ptr<JoinHook> DistributedDataParallel::join_hook(const JoinOptions& opts) {
  divide_by_initial_world_size_ = opts.divide_by_initial_world_size;
  return std::make_unique<DDPJoinHook>(*this);
}

int DistributedDataParallel::join_common_rank(bool candidate) {
  Tensor t = full(Shape{1}, candidate ? double(group_->rank()) : -1.0, TensorOptions(kInt64));
  group_->all_reduce(t, ReduceOp::Max);
  return static_cast<int>(t.item());
}

void DistributedDataParallel::join_pre_forward() {
  const int64_t active = Join::notify_join_context(*this);  // step 1
  divisor_ = divide_by_initial_world_size_ || active <= 0 ? group_->size() : double(active);
  const bool buffers = !module_->named_buffers().empty();
  if (opts_.broadcast_buffers && buffers && group_->size() > 1) broadcast_buffers(join_common_rank(true));  // 2
  Tensor sync = full(Shape{1}, sync_ ? 1.0 : 0.0);                                                          // step 3
  group_->all_reduce(sync, ReduceOp::Sum);
}

void DistributedDataParallel::join_shadow_iteration() {
  const bool buffers = !module_->named_buffers().empty();
  if (opts_.broadcast_buffers && buffers && group_->size() > 1) broadcast_buffers(join_common_rank(false));
  Tensor sync = zeros(Shape{1});
  group_->all_reduce(sync, ReduceOp::Sum);
  if (sync.item() == 0) return;
  // Step 4: zero gradients through the same hook, then the flags of find_unused_parameters
  // (zeros: nothing used here), as finish_backward issues them.
  divisor_ = group_->size();
  for (size_t k = 0; k < buckets_.size(); ++k) {
    buckets_[k]->flat.zero_();
    GradBucket view = grad_bucket(k);
    buckets_[k]->future = hook_(view);
  }
  std::shared_ptr<Work> used_work;
  const Tensor unused = zeros({int64_t(params_.size())}, TensorOptions(kInt32));
  if (opts_.find_unused_parameters) used_work = group_->all_reduce_async(unused, ReduceOp::Sum);
  for (auto& b : buckets_) b->future->wait();
  if (used_work) used_work->wait();
  for (auto& b : buckets_) b->future.reset();
}

void DistributedDataParallel::join_sync_final_model(bool is_last_joiner) {
  divisor_ = group_->size();
  std::vector<Tensor> state;
  for (auto& [n, v] : module_->named_state()) state.push_back(v.data());
  broadcast_coalesced(state, join_common_rank(is_last_joiner));
}

}  // namespace ddl::dist
