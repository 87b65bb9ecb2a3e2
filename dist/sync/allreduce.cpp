// allreduce (Wisconsin CS744 assignment 2, part 2b): after backward, one blocking all-reduce per parameter
// gradient, then divide by the world size. The simplest correct data parallelism; it
// pays one network round per parameter and waits for all of them after backward
// (compare ddp, which buckets them and overlaps them with backward).
#include <ddl/dist/sync/builtins.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

namespace {

class AllReduceSync final : public SyncStrategy {
 public:
  AllReduceSync(ModelPtr model, GroupPtr group) : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return "allreduce"; }
  nn::Module& model() override { return *model_; }

  void after_backward() override {
    const int world = group_->size();
    comm_.after_backward_ms = 0;
    DDL_TRACE_SPAN("allreduce sync gradients", "sync");
    for (const Tensor& g : gradients_of(params_)) {
      comm_.after_backward_ms += timed_ms([&] { group_->all_reduce(g, ReduceOp::Sum); });
      g.div_(world);  // sum of the ranks' mean losses' gradients / N = gradient of the global mean
    }
  }

 private:
  ModelPtr model_;
  GroupPtr group_;
  std::vector<Variable> params_;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_allreduce_sync(ModelPtr model, GroupPtr group) {
  return std::make_unique<AllReduceSync>(std::move(model), std::move(group));
}

}  // namespace ddl::dist::detail
