// Lab ddp: data parallelism with gradient buckets whose all-reduce overlaps backward, as
// PyTorch's DistributedDataParallel does (Li et al., "PyTorch Distributed", VLDB 2020;
// torch/csrc/distributed/c10d/reducer.cpp). A gradient hook per parameter packs each
// gradient into its bucket as backward produces it; a full bucket's all_reduce starts at
// once, on the process group's worker thread, while backward computes the rest;
// after_backward waits for every bucket and copies the averages back into .grad.
// The reference marks its solution regions; labs/make_skeleton.py replaces them to make
// the students' ddp_skeleton.cpp (labs/ddp/README.md).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <ddl/dist/sync/common.h>
#include <ddl/tensor/core/factory.h>

namespace {

using namespace ddl;
using namespace ddl::dist;

// The buckets for parameters of `bytes[i]` bytes each (registration order) and a cap of
// `cap` bytes: walk the parameters from the LAST to the first, appending each to the
// current bucket; start a new bucket when the parameter would take the current one past
// the cap (a parameter larger than the cap gets a bucket of its own). Returns, per
// bucket, its parameter indices in the order they were appended.
std::vector<std::vector<size_t>> assign_buckets(const std::vector<int64_t>& bytes, int64_t cap) {
  // BEGIN SOLUTION assign_buckets
  std::vector<std::vector<size_t>> buckets;
  int64_t filled = 0;
  for (size_t i = bytes.size(); i-- > 0;) {
    if (buckets.empty() || (!buckets.back().empty() && filled + bytes[i] > cap)) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(i);
    filled += bytes[i];
  }
  return buckets;
  // END SOLUTION
}

// The model the strategy hands out: forward is the wrapped module's; what it adds are the
// hooks and the buckets, as torch.nn.parallel.DistributedDataParallel(module) does.
class BucketedModel final : public nn::Module {
 public:
  BucketedModel(std::shared_ptr<nn::Module> module, std::shared_ptr<ProcessGroup> group, int64_t cap)
      : nn::Module("BucketedModel"), module_(std::move(module)), group_(std::move(group)) {
    register_module("module", module_);
    params_ = trainable_parameters(*module_);
    std::vector<int64_t> bytes;
    for (const auto& p : params_) bytes.push_back(p.numel() * static_cast<int64_t>(dtype_size(p.dtype())));
    bucket_of_.resize(params_.size());
    offset_of_.resize(params_.size());
    for (const auto& members : assign_buckets(bytes, cap)) {
      Bucket b;
      int64_t numel = 0;
      for (const size_t i : members) {
        DDL_CHECK(params_[i].dtype() == DType::Float32, "student-ddp: parameter ", i, " is ", params_[i].dtype(),
                  "; this lab's buckets hold float32 only");
        bucket_of_[i] = buckets_.size();
        offset_of_[i] = numel;
        numel += params_[i].numel();
      }
      b.params = members;
      b.flat = zeros({numel});
      buckets_.push_back(std::move(b));
    }
    start_step();
    for (size_t i = 0; i < params_.size(); ++i)
      hooks_.push_back(params_[i].register_post_accumulate_grad_hook([this, i](Variable&) { on_gradient_ready(i); }));
  }
  ~BucketedModel() override {
    for (size_t i = 0; i < params_.size(); ++i) params_[i].remove_hook(hooks_[i]);
  }
  Variable forward(const Variable& x) override { return module_->forward(x); }

  // after_backward: every bucket launched (else the parameters that got no gradient are
  // named), waited for, and copied back; then ready for the next backward.
  void finish_step() {
    std::string missing;
    for (size_t i = 0; i < params_.size(); ++i)
      if (!ready_[i]) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    DDL_CHECK(missing.empty(), group_->log_prefix(), " student-ddp: parameters ", missing,
              " got no gradient in this backward, so their buckets never filled");
    // BEGIN SOLUTION finish_step
    DDL_CHECK(next_launch_ == buckets_.size(), "student-ddp: only ", next_launch_, " of ", buckets_.size(),
              " buckets were launched");
    for (Bucket& b : buckets_) {
      b.work->wait();
      for (const size_t i : b.params) params_[i].grad().copy_(slot(i));
    }
    // END SOLUTION
    start_step();
  }

 private:
  struct Bucket {
    Tensor flat;                 // the bucket's gradients, one after the other
    std::vector<size_t> params;  // in slot order
    size_t pending = 0;          // slots not filled yet in this backward
    std::shared_ptr<Work> work;  // its all_reduce, once launched
  };

  // Parameter i's place in its bucket, shaped like the parameter.
  Tensor slot(size_t i) const {
    return buckets_[bucket_of_[i]].flat.narrow(0, offset_of_[i], params_[i].numel()).view(params_[i].shape());
  }

  void start_step() {
    for (Bucket& b : buckets_) b.pending = b.params.size(), b.work = nullptr;
    ready_.assign(params_.size(), false);
    next_launch_ = 0;
  }

  // The hook: runs during backward, right after parameter i's .grad is complete. Copy it,
  // divided by the world size, into its slot; when that fills the bucket, launch every
  // full bucket that is next in line: bucket k only after bucket k - 1, so that all ranks
  // start the same all_reduces in the same order whatever order their gradients come in.
  void on_gradient_ready(size_t i) {
    DDL_CHECK(!ready_[i], "student-ddp: parameter ", i, " got its gradient twice in one backward");
    ready_[i] = true;
    // BEGIN SOLUTION on_gradient_ready
    slot(i).copy_(params_[i].grad());
    slot(i).mul_(1.0 / group_->size());
    --buckets_[bucket_of_[i]].pending;
    while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
      Bucket& b = buckets_[next_launch_++];
      b.work = group_->all_reduce_async(b.flat, ReduceOp::Sum);
    }
    // END SOLUTION
  }

  std::shared_ptr<nn::Module> module_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Variable> params_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;   // parameter -> its bucket
  std::vector<int64_t> offset_of_;  // parameter -> its first element in the bucket
  std::vector<int> hooks_;
  std::vector<bool> ready_;  // this backward: has parameter i's gradient arrived
  size_t next_launch_ = 0;   // the next bucket to launch
};

class BucketedDDP final : public SyncStrategy {
 public:
  BucketedDDP(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group, int64_t cap) {
    broadcast_state(*model, *group);  // every replica starts from rank 0's weights
    model_ = std::make_shared<BucketedModel>(std::move(model), std::move(group), cap);
  }
  std::string name() const override { return "student-ddp"; }
  nn::Module& model() override { return *model_; }
  void after_backward() override {
    comm_.after_backward_ms = timed_ms([&] { model_->finish_step(); });
  }

 private:
  std::shared_ptr<BucketedModel> model_;
};

// "student-ddp:CAP": CAP, the bucket cap in bytes, a whole number from 4 to 1 GiB.
std::string cap_problem(const std::string& arg) {
  const bool digits = !arg.empty() && arg.size() <= 10 && arg.find_first_not_of("0123456789") == std::string::npos;
  if (digits && std::stoll(arg) >= 4 && std::stoll(arg) <= (int64_t(1) << 30)) return "";
  return "in 'student-ddp:" + arg + "', the bucket cap must be a whole number of bytes from 4 to 1073741824, " +
         "e.g. student-ddp:1048576";
}

}  // namespace

extern "C" void ddl_register_strategies() {
  register_sync_strategy(
      "student-ddp",
      [](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group, const std::string& cap) {
        return std::make_unique<BucketedDDP>(std::move(model), std::move(group), std::stoll(cap));
      },
      SyncStrategyInfo{.help = "gradient buckets of at most CAP bytes, all-reduced while backward runs (lab ddp)",
                       .arg = "CAP",
                       .example = "student-ddp:1048576",
                       .check_arg = cap_problem});
}
