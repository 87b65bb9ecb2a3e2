// zero1 / zero2: ZeroShards behind the SyncStrategy interface. The app's optimizer keeps
// the hyper-parameters (its lr schedule moves them) but no state: a local optimizer of
// the same kind steps this rank's shard. For checkpoints, consolidate_optimizer_state
// gathers the whole state into the app's optimizer, and whole state loaded into it is
// taken apart at the next step (see Note [Whole state in, whole state out], docs/sharded.md).
#include <ddl/dist/sync/common.h>
#include <ddl/dist/zero/zero_optimizer.h>
#include <ddl/dist/zero/zero_sync.h>

namespace ddl::dist::detail {

namespace {

class ZeroSync final : public SyncStrategy {
 public:
  ZeroSync(ModelPtr model, GroupPtr group, int stage) : model_(std::move(model)), stage_(stage) {
    broadcast_state(*model_, *group);
    params_ = trainable_parameters(*model_);
    shards_ = std::make_unique<ZeroShards>(std::vector<std::vector<Variable>>{params_}, std::move(group), stage,
                                           ZeroOptions().bucket_bytes());
  }
  std::string name() const override { return stage_ == 1 ? "zero1" : "zero2"; }
  nn::Module& model() override { return *model_; }

  void after_backward() override {
    comm_.after_backward_ms = timed_ms([&] { shards_->reduce_gradients(); });
  }
  void step(optim::Optimizer& opt) override {
    if (!local_) {
      check_same_parameters(opt);
      local_ = clone_optimizer(opt, shards_->local_groups());
    }
    zero_step(*shards_, opt, *local_, &comm_.step_ms);  // the all-gather (the reduction was after backward)
  }
  void consolidate_optimizer_state(optim::Optimizer& opt, int to_rank) override {
    if (local_) zero_consolidate(*shards_, opt, *local_, to_rank);
  }

 private:
  // The shards were cut from the model's trainable parameters, as one group.
  void check_same_parameters(const optim::Optimizer& opt) const {
    const auto& groups = opt.param_groups();
    bool same = groups.size() == 1 && groups[0].params.size() == params_.size();
    for (size_t i = 0; same && i < params_.size(); ++i) same = groups[0].params[i].impl() == params_[i].impl();
    DDL_CHECK(same, name(), ": the optimizer must hold the model's trainable parameters, in order, as one group (",
              params_.size(), " parameters); for several groups use ZeroRedundancyOptimizer directly");
  }

  ModelPtr model_;
  int stage_;
  std::vector<Variable> params_;
  std::unique_ptr<ZeroShards> shards_;
  std::unique_ptr<optim::Optimizer> local_;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_zero_sync(ModelPtr model, GroupPtr group, int stage) {
  return std::make_unique<ZeroSync>(std::move(model), std::move(group), stage);
}

}  // namespace ddl::dist::detail
