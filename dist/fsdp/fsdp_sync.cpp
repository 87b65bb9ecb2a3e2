// fsdp: FullyShardedDataParallel behind the SyncStrategy interface. The app builds its
// optimizer over the model's own parameters, which FSDP has emptied; the first step()
// hands that optimizer the flat shards instead, keeping its class and hyper-parameters
// (and so the learning-rate schedule that holds it). gather_full_model() lets the app
// evaluate and save the wrapped model between steps; consolidate_optimizer_state gives the
// optimizer back its whole parameters and state for a snapshot, load_full_state takes a
// resumed snapshot's weights apart.
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
    stepped_ = true;
    opt.step();
  }
  void gather_full_model() override { fsdp_->summon_full_params(); }
  // The optimizer goes back to the whole parameters on to_rank, holding their whole state
  // (docs/fsdp.md, "Checkpoints"); its next step() cuts it into shards again.
  void consolidate_optimizer_state(optim::Optimizer& opt, int to_rank) override {
    if (!stepped_) return;       // the optimizer still holds the whole parameters (and any state)
    if (!rebound_) rebind(opt);  // to_rank, consolidated before with no step since: shards again
    auto whole = fsdp_->full_optim_state(opt.state_tensors());
    if (fsdp_->group().rank() != to_rank) return;
    opt.param_groups() = {optim::ParamGroup{whole_params_, opt.param_groups()[0].options}};
    opt.load_state(whole, opt.state_metadata());
    rebound_ = false;
    // The app's zero_grad() now reaches the whole parameters, not the shards: clear the
    // shards' gradients here, or the next backward would add to this step's.
    for (auto& p : fsdp_->parameters()) p.zero_grad(true);
  }
  void load_full_state(optim::Optimizer& opt) override {
    DDL_CHECK(!stepped_, "fsdp: load a snapshot before the first step");
    std::vector<std::pair<std::string, Tensor>> state;
    for (const auto& [name, v] : fsdp_->module()->named_state()) state.emplace_back(name, v.data());
    fsdp_->load_full_state_dict(state);  // this rank's slices; drops the full copies
    (void)opt;                           // its whole state is cut at the first step (rebind)
  }

 private:
  // One group over the shards, with the first group's options. State the optimizer holds
  // for the whole parameters (a snapshot loaded, or consolidated) is cut into this rank's shards.
  void rebind(optim::Optimizer& opt) {
    auto& groups = opt.param_groups();
    DDL_CHECK(!groups.empty(), "fsdp: the optimizer has no parameter group");
    for (const auto& g : groups)
      DDL_CHECK(g.options == groups[0].options,
                "fsdp: parameter groups with different options cannot share the flat shards");
    whole_params_.clear();
    for (const auto& g : groups) whole_params_.insert(whole_params_.end(), g.params.begin(), g.params.end());
    const auto module_params = fsdp_->module()->parameters();
    bool same = whole_params_.size() == module_params.size();
    for (size_t i = 0; same && i < module_params.size(); ++i) same = whole_params_[i].impl() == module_params[i].impl();
    DDL_CHECK(same, "fsdp: the optimizer must hold the model's parameters, in order (", module_params.size(),
              " parameters)");
    const auto shard_state = fsdp_->shard_optim_state(opt.state_tensors());
    groups = {optim::ParamGroup{fsdp_->parameters(), groups[0].options}};
    opt.load_state(shard_state, opt.state_metadata());
    rebound_ = true;
  }

  std::shared_ptr<FullyShardedDataParallel> fsdp_;
  std::vector<Variable> whole_params_;  // the model's parameters, as the app gave them
  bool rebound_ = false;                // the optimizer holds the shards (else the whole parameters)
  bool stepped_ = false;                // the same on every rank: whether consolidating needs collectives
};

}  // namespace

std::unique_ptr<SyncStrategy> make_fsdp_sync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
  return std::make_unique<FSDPSync>(std::move(model), std::move(group));
}

}  // namespace ddl::dist::detail
