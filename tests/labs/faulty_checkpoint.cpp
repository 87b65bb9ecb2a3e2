// Lab fault's reference with one of its parts wrong, so that tests/labs/test_labs.sh sees
// each of the lab's own checks fail with its reason: `faulty-no-agreement` resumes every
// rank from its own newest checkpoint (after a torn write the ranks disagree),
// `faulty-rank0-newest` resumes every rank from rank 0's newest file (the replicas agree,
// but on a step another rank never finished), `faulty-lost-weights` restores the step
// but leaves the weights as they were (a load into copies of the tensors), and
// `faulty-torn-write` writes straight to the final name (a cut write leaves a torn file
// there; its reader skips files of the wrong size, so only the atomicity check fails).
#define ddl_register_strategies ddl_lab_fault_reference_register_strategies
#include "labs/fault/solution.cpp"
#undef ddl_register_strategies

namespace {

enum class Mistake { NoAgreement, RankZero, LostWeights, TornWrite };

class FaultyCheckpointSync final : public SyncStrategy {
 public:
  FaultyCheckpointSync(Mistake mistake, std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group)
      : mistake_(mistake), model_(model), group_(group), inner_(make_sync_strategy("allreduce", model, group)) {
    dir_ = env_or_throw("DDL_LAB_CHECKPOINT_DIR");
    every_ = std::stoll(env_or_throw("DDL_LAB_CHECKPOINT_EVERY"));
    std::vector<int64_t> held = held_steps(dir_, group_->rank());
    if (mistake_ == Mistake::TornWrite)  // a reader that at least refuses files of the wrong size
      std::erase_if(held, [&](int64_t s) { return !whole(s); });
    const int64_t newest = held.empty() ? 0 : held.back();
    if (mistake_ == Mistake::RankZero) {
      const Tensor t = full({1}, static_cast<double>(newest), DType::Int64);
      group_->broadcast(t, 0);
      step_ = t.data<int64_t>()[0];
    } else {
      step_ = mistake_ == Mistake::NoAgreement ? newest : agree_on_step(*group_, newest);
    }
    const int from = mistake_ == Mistake::RankZero ? 0 : group_->rank();
    std::vector<Tensor> before;
    for (const auto& p : model_->parameters()) before.push_back(p.data().clone());
    if (step_ > 0) load_checkpoint(final_name(dir_, from, step_), step_, *model_);
    if (mistake_ == Mistake::LostWeights)
      for (size_t i = 0; i < before.size(); ++i) model_->parameters()[i].data().copy_(before[i]);
  }
  std::string name() const override { return "faulty-checkpoint"; }
  nn::Module& model() override { return inner_->model(); }
  void after_backward() override { inner_->after_backward(); }
  void step(optim::Optimizer& opt) override { inner_->step(opt); }
  void after_step() override {
    inner_->after_step();
    if (++step_ % every_ != 0) return;
    const std::string path = final_name(dir_, group_->rank(), step_), bytes = encode(*model_, step_);
    if (mistake_ == Mistake::TornWrite)
      std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    else
      write_atomically(path, bytes);
  }

 private:
  bool whole(int64_t step) const {
    return static_cast<int64_t>(fs::file_size(final_name(dir_, group_->rank(), step))) ==
           static_cast<int64_t>(encode(*model_, step).size());
  }
  Mistake mistake_;
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<ProcessGroup> group_;
  std::unique_ptr<SyncStrategy> inner_;
  std::string dir_;
  int64_t every_ = 1, step_ = 0;
};

void add(const char* name, Mistake mistake) {
  register_sync_strategy(
      name,
      [mistake](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
        return std::make_unique<FaultyCheckpointSync>(mistake, std::move(model), std::move(group));
      },
      "a deliberately wrong checkpointing strategy (tests/labs)");
}

}  // namespace

extern "C" void ddl_register_strategies() {
  add("faulty-no-agreement", Mistake::NoAgreement);
  add("faulty-rank0-newest", Mistake::RankZero);
  add("faulty-lost-weights", Mistake::LostWeights);
  add("faulty-torn-write", Mistake::TornWrite);
}
