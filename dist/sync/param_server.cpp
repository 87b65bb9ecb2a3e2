// param-server: rank 0 holds the authoritative weights and the only optimizer that
// steps. Workers push gradients (a gather to rank 0), rank 0 averages and steps, every
// rank pulls the new weights (a broadcast). Rank 0 also trains as a worker on its own
// shard, so N ranks still mean N shards, as with the other strategies (a dedicated
// server would idle in these small runs). Its known cost: rank 0 receives N-1 gradients
// a step and holds N of them (N·P floats) while it averages.
#include <ddl/dist/sync/builtins.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

namespace {

class ParamServerSync final : public SyncStrategy {
 public:
  ParamServerSync(ModelPtr model, GroupPtr group) : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return "param-server"; }
  nn::Module& model() override { return *model_; }

  // Push: rank 0 gathers every rank's flat gradient and replaces its own with the
  // average; the workers' gradients stay as they are (nobody uses them).
  void after_backward() override {
    comm_.after_backward_ms = 0;
    const int world = group_->size();
    if (world == 1) return;
    const bool server = group_->rank() == 0;
    DDL_TRACE_SPAN("param-server push", "sync");
    coalesced(gradients_of(params_), [&](const Tensor& flat) {
      // all: [N, n] on rank 0, row r = rank r's gradient.
      const Tensor all = server ? empty({world, flat.numel()}, TensorOptions(flat.dtype(), flat.device())) : Tensor();
      comm_.after_backward_ms += timed_ms([&] { group_->gather(all, flat, 0); });
      if (!server) return;
      flat.copy_(all.select(0, 0));
      for (int r = 1; r < world; ++r) flat.add_(all.select(0, r));  // rank order: deterministic
      flat.div_(world);
    });
  }

  // Only the server's optimizer steps (so only it has momentum state); then pull: every
  // rank copies the server's parameters and buffers. The pull is reported as step_ms, so
  // a caller timing step() as optimizer work can count it as communication instead.
  void step(optim::Optimizer& opt) override {
    if (group_->rank() == 0) opt.step();
    DDL_TRACE_SPAN("param-server pull", "sync");
    comm_.step_ms = timed_ms([&] { broadcast_state(*model_, *group_); });
  }

 private:
  ModelPtr model_;
  GroupPtr group_;
  std::vector<Variable> params_;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_param_server_sync(ModelPtr model, GroupPtr group) {
  return std::make_unique<ParamServerSync>(std::move(model), std::move(group));
}

}  // namespace ddl::dist::detail
