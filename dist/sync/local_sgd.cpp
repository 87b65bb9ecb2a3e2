// local-sgd:K: each rank steps alone on its own shard; every K steps the models
// (parameters and floating buffers) are averaged with one all-reduce per dtype.
// Communication drops K-fold against a gradient all-reduce; in between, the replicas
// drift apart. Optimizer state (momentum) stays local. K = 1 is model averaging after
// every step, which for plain SGD (no momentum) equals gradient averaging.
#include <ddl/dist/sync/builtins.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

namespace {

class LocalSGDSync final : public SyncStrategy {
 public:
  LocalSGDSync(ModelPtr model, GroupPtr group, int k) : model_(std::move(model)), group_(std::move(group)), k_(k) {
    DDL_CHECK(k_ >= 1, "local-sgd: the averaging period K must be >= 1, got ", k_);
    broadcast_state(*model_, *group_);
  }
  std::string name() const override { return "local-sgd:" + std::to_string(k_); }
  nn::Module& model() override { return *model_; }

  void after_step() override {
    comm_.after_step_ms = 0;
    if (++steps_ % k_ != 0 || group_->size() == 1) return;
    DDL_TRACE_SPAN("local-sgd average models", "sync");
    coalesced(floating_state(*model_), [&](const Tensor& flat) {
      comm_.after_step_ms += timed_ms([&] { group_->all_reduce(flat, ReduceOp::Sum); });
      flat.div_(group_->size());
    });
  }

 private:
  ModelPtr model_;
  GroupPtr group_;
  int k_;
  int64_t steps_ = 0;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_local_sgd_sync(ModelPtr model, GroupPtr group, int k) {
  return std::make_unique<LocalSGDSync>(std::move(model), std::move(group), k);
}

}  // namespace ddl::dist::detail
