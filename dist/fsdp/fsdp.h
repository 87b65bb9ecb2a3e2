// FullyShardedDataParallel (ZeRO stage 3; Rajbhandari et al. 2020, "ZeRO"; Zhao et al.
// 2023, "PyTorch FSDP"): the model is cut into units, and each rank keeps only its
// 1/N slice of every unit's flattened parameters. A unit's full parameters exist only
// while it runs: all-gathered just before its forward and again before its backward,
// freed after each; its gradients are reduce-scattered in backward, so each rank ends
// up with the averaged gradient of its slice only, and the optimizer steps the slices.
// Buffers (BatchNorm statistics) stay whole on every rank. CPU tensors (gloo) only.
// See docs/fsdp.md and Note [FSDP unit lifecycle] in fsdp.cpp.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ddl/dist/process_group.h>
#include <ddl/nn/module.h>

namespace ddl::dist {

namespace detail {
struct FsdpUnit;
}

struct FSDPOptions {
  // As PyTorch's size_based_auto_wrap_policy: a submodule its container runs in sequence
  // (nn::hooked_children: a Sequential's children, a TransformerEncoder's layers) becomes
  // a unit when it holds at least this many parameters not already in a smaller unit,
  // deepest first. Parameters left over form the root unit, gathered for the whole step.
  int64_t min_num_params = 1;
  bool forward_prefetch = true;   // gather the next unit (last step's order) during this one's forward
  bool backward_prefetch = true;  // gather the previous unit during this one's backward
};

// What FSDP did, for reports and tests.
struct FSDPStats {
  int64_t peak_gathered_bytes = 0;   // most bytes of full parameters held at once (root included)
  double last_forward_wait_ms = 0;   // time the last forward spent waiting for all-gathers
  double last_backward_wait_ms = 0;  // ... the last backward, for all-gathers and reduce-scatters
  int64_t all_gathers = 0, reduce_scatters = 0;
  int64_t prefetches = 0;  // all-gathers started ahead of the unit that needed them
};

// One unit, as planned.
struct FSDPUnitInfo {
  std::string name;                 // the submodule's dotted name; "" for the root unit
  std::vector<std::string> params;  // parameter names, in flat order
  int64_t numel = 0;                // unpadded
  int64_t shard_numel = 0;          // this (every) rank's slice: ceil(numel / world)
};

class FullyShardedDataParallel : public nn::Module {
 public:
  // Broadcasts rank 0's parameters and buffers, cuts the model into units and frees the
  // full parameters: afterwards the module's parameters read as empty ([0]) outside
  // forward. Every parameter must be a CPU tensor that requires grad.
  FullyShardedDataParallel(std::shared_ptr<nn::Module> module, std::shared_ptr<ProcessGroup> group,
                           FSDPOptions opts = {});
  ~FullyShardedDataParallel() override;

  // All ranks must call forward (and backward) together: units gather collectively.
  Variable forward(const Variable& x) override;
  void train(bool on = true) override;
  // parameters() are the flat shards ("flat_param_<k>", unit k): build the optimizer on them.

  const std::shared_ptr<nn::Module>& module() const { return module_; }
  ProcessGroup& group() const { return *group_; }
  const std::vector<FSDPUnitInfo>& units() const { return infos_; }
  const FSDPStats& stats() const { return stats_; }
  // Physical bytes the units' full parameters hold right now: 0 between steps.
  int64_t gathered_resident_bytes() const;

  // ---- whole (unsharded) state: collective, every rank must call ----
  // The wrapped module's parameters and buffers under its own names (no prefix), as one
  // process would hold them; buffers are this rank's.
  std::vector<std::pair<std::string, Tensor>> full_state_dict();
  // Writes full_state_dict() as safetensors from rank 0 (loads with nn::load_state and
  // with safetensors.torch.load_file).
  void save_full_state(const std::string& path);
  // Takes this rank's slices (and the buffers) from a whole state dict, written at any
  // world size. Names and shapes must match the wrapped module's.
  void load_full_state_dict(const std::vector<std::pair<std::string, Tensor>>& state);
  void load_full_state(const std::string& path);
  // Gathers every unit into the module's own parameters (owned copies) so that the
  // wrapped module can be used alone (evaluation, saving), as PyTorch's
  // summon_full_params; the next forward shards them again.
  void summon_full_params();

  // ---- the optimizer's state whole (fsdp_optim_state.cpp) ----
  // An optimizer over parameters() (one flat shard per unit with parameters) holds state per
  // shard, named as its state_tensors() does ("state.<j>.<field>"). full_optim_state turns
  // it into the state one process's optimizer over module()->parameters() would hold
  // ("state.<i>.<field>", i in that order), on every rank: collective. shard_optim_state
  // takes this rank's shards back from such whole state, written at any world size: local.
  // Per-element state is cut as the parameters are; scalar state (Adam's step) is shared.
  std::vector<std::pair<std::string, Tensor>> full_optim_state(
      const std::vector<std::pair<std::string, Tensor>>& sharded);
  std::vector<std::pair<std::string, Tensor>> shard_optim_state(
      const std::vector<std::pair<std::string, Tensor>>& whole) const;

 private:
  void plan_units(int64_t min_num_params);
  void broadcast_from_rank0();
  void build_shards();
  void install_hooks();
  void pre_forward(size_t u);
  Variable post_forward(size_t u, Variable out);
  void pre_backward(size_t u);
  void on_grad_ready(size_t u);
  void begin_backward();
  void finish_backward();
  void start_gather(size_t u);
  void finish_gather(size_t u, double& wait_ms);
  void release(size_t u);
  void reduce_scatter(size_t u);
  Tensor gather_whole(size_t u);  // an owned copy of unit u's full flat parameters

  std::shared_ptr<nn::Module> module_;
  std::shared_ptr<ProcessGroup> group_;
  FSDPOptions opts_;
  std::vector<std::unique_ptr<detail::FsdpUnit>> units_;  // [0]: the root unit
  std::vector<FSDPUnitInfo> infos_;
  std::vector<int> forward_hook_ids_;
  std::vector<size_t> order_, last_order_;  // units by forward entry: this step's, the last one's
  bool in_forward_ = false;                 // the hooks act only inside this wrapper's forward
  bool in_backward_ = false;
  int64_t gathered_bytes_ = 0;
  FSDPStats stats_;
};

using FSDP = FullyShardedDataParallel;

}  // namespace ddl::dist
