// ZeroRedundancyOptimizer: ZeRO stages 1 and 2 as an optimizer, after PyTorch's
// torch.distributed.optim.ZeroRedundancyOptimizer. Every rank holds the whole model; each
// steps only its shard of the parameters with a local optimizer that holds state for that
// shard alone (stage 1), and with stage 2 keeps only its shard's reduced gradient too.
//   ddl::dist::ZeroRedundancyOptimizer opt(model->parameters(), group,
//       [](std::vector<Variable> p) { return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-3)); });
//   opt.zero_grad(); loss.backward(); opt.step();   // no DDP wrapper: step() averages the gradients
// See docs/sharded.md for who sends what.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <ddl/dist/zero/zero_shards.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::dist {

// Builds the local optimizer for the given parameters (this rank's pieces).
using LocalOptimizerFactory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Variable>)>;

struct ZeroOptions {
  DDL_ARG(int, stage) = 1;                            // 1: shard optimizer state; 2: and gradients
  DDL_ARG(int64_t, bucket_bytes) = int64_t{4} << 20;  // see Note [ZeRO partition]
};

class ZeroRedundancyOptimizer : public optim::Optimizer {
 public:
  // Collective: every rank of `group` constructs it with the same parameters in the same
  // order. Broadcasts rank 0's parameter values, so replicas start equal. param_groups()
  // are the whole parameters, as the user passed them: lr schedulers work on them, and
  // their options are copied to the local optimizer at every step.
  ZeroRedundancyOptimizer(std::vector<Variable> params, std::shared_ptr<ProcessGroup> group,
                          LocalOptimizerFactory make_local, ZeroOptions options = {});

  // Collective: averages the gradients (reduce-scatter), steps this rank's shard, and
  // all-gathers the updated parameters, which are then equal on every rank.
  void step() override;

  // Collective: the whole optimizer state, as one process would hold it, gathered on
  // to_rank, where state_tensors() (and so save_optimizer) then returns it; the next step()
  // drops it again. Equally, state loaded whole (load_state, load_optimizer) on every rank
  // is taken apart into shards at the next step(), so a checkpoint taken at one world size
  // resumes at another.
  void consolidate_state_dict(int to_rank = 0);

  // Bytes this rank holds (docs/sharded.md, "Memory").
  ZeroMemory memory() const { return shards_->memory(local_.get()); }
  void reset_peak_memory() { shards_->reset_peak(); }
  const optim::Optimizer& local_optimizer() const { return *local_; }
  int stage() const { return shards_->stage(); }

 private:
  ZeroRedundancyOptimizer(std::vector<Variable> params,
                          std::pair<std::unique_ptr<detail::ZeroShards>, std::unique_ptr<optim::Optimizer>> parts);
  std::unique_ptr<detail::ZeroShards> shards_;
  std::unique_ptr<optim::Optimizer> local_;
};

namespace detail {
// One training step's optimizer work for a sharded optimizer: `whole`'s group options
// copied to `local`; state that `whole` holds (a loaded checkpoint) taken apart into
// `local` and dropped from `whole`; the gradients reduced; `local` stepped; the
// parameters gathered. *comm_ms (when given) ← milliseconds spent reducing and gathering.
void zero_step(ZeroShards& shards, optim::Optimizer& whole, optim::Optimizer& local, double* comm_ms = nullptr);
// Collective: `whole` on to_rank ← the whole state of `local`.
void zero_consolidate(ZeroShards& shards, optim::Optimizer& whole, const optim::Optimizer& local, int to_rank);
// A fresh optimizer of app's kind (SGD, Adam, AdamW) and hyper-parameters over `groups`,
// one group per app group; a ddl::Error for any other kind.
std::unique_ptr<optim::Optimizer> clone_optimizer(const optim::Optimizer& app,
                                                  const std::vector<std::vector<Variable>>& groups);
}  // namespace detail

}  // namespace ddl::dist
