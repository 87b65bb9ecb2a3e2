// fsdp: FullyShardedDataParallel behind the SyncStrategy interface. The app builds its
// optimizer over the model's own parameters, which FSDP has emptied; the first step()
// hands that optimizer the flat shards instead, keeping its class and hyper-parameters
// (and so the learning-rate schedule that holds it). gather_full_model() lets the app
// evaluate and save the wrapped model between steps.
#include <ddl/dist/fsdp/fsdp_sync.h>

namespace ddl::dist::detail {

namespace {

class FSDPSync final : public SyncStrategy {
 public:
  FSDPSync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group)
      : fsdp_(std::make_shared<FullyShardedDataParallel>(std::move(model), std::move(group))) {}
  std::string name() const override { return "fsdp"; }
  nn::Module& model() override { return *fsdp_; }
  void after_backward() override {
    comm_.forward_ms = fsdp_->stats().last_forward_wait_ms;
    comm_.backward_ms = fsdp_->stats().last_backward_wait_ms;
  }
  void step(optim::Optimizer& opt) override {
    if (!rebound_) rebind(opt);
    opt.step();
  }
  void gather_full_model() override { fsdp_->summon_full_params(); }

 private:
  // One group over the shards, with the first group's options. Only before the
  // optimizer has state: a shard's state cannot come from whole parameters' state.
  void rebind(optim::Optimizer& opt) {
    auto& groups = opt.param_groups();
    DDL_CHECK(!groups.empty(), "fsdp: the optimizer has no parameter group");
    DDL_CHECK(opt.state_tensors().empty(),
              "fsdp: the optimizer already holds state for the whole parameters;"
              " give it to the strategy before its first step");
    for (const auto& g : groups)
      DDL_CHECK(g.options == groups[0].options,
                "fsdp: parameter groups with different options cannot share the flat shards");
    optim::ParamGroup shards{fsdp_->parameters(), groups[0].options};
    groups = {shards};
    rebound_ = true;
  }

  std::shared_ptr<FullyShardedDataParallel> fsdp_;
  bool rebound_ = false;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_fsdp_sync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
  return std::make_unique<FSDPSync>(std::move(model), std::move(group));
}

}  // namespace ddl::dist::detail
