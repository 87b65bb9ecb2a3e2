// gather-scatter (seed 002, part 2a): rank 0 gathers every rank's gradient, averages,
// and scatters the average back. Rank 0 is a hub: it receives (N-1) gradients and sends
// (N-1) averages while the other ranks wait, so its link carries N-1 times what a ring
// rank's does. Kept per parameter, as in the seed, so that comparing it with
// `allreduce` (also per parameter) isolates the communication pattern; `ring` and
// `ddp` show what flattening and bucketing add.
#include "dist/sync/common.h"
#include "tensor/factory.h"

namespace ddl::dist::detail {

namespace {

class GatherScatterSync final : public SyncStrategy {
 public:
  GatherScatterSync(ModelPtr model, GroupPtr group) : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return "gather-scatter"; }
  nn::Module& model() override { return *model_; }

  void after_backward() override {
    comm_.after_backward_ms = 0;
    if (group_->size() == 1) return;
    for (const Tensor& g : gradients_of(params_)) sync_one(g);
  }

 private:
  // g: the local gradient of one parameter, n elements. On rank 0,
  // all: [N, n], row r = rank r's gradient; the same buffer then holds N copies of the average.
  void sync_one(const Tensor& g) {
    const int world = group_->size();
    const bool root = group_->rank() == 0;
    const Tensor all = root ? empty({world, g.numel()}, TensorOptions(g.dtype(), g.device())) : Tensor();
    comm_.after_backward_ms += timed_ms([&] { group_->gather(all, g, 0); });
    if (root) {
      // Sum the rows in rank order (deterministic), divide, and copy the average into every row.
      const Tensor avg = all.select(0, 0).clone();
      for (int r = 1; r < world; ++r) avg.add_(all.select(0, r));
      avg.div_(world);
      for (int r = 0; r < world; ++r) all.select(0, r).copy_(avg);
    }
    // Row r goes to rank r and overwrites its gradient; rank 0 "sends" itself row 0.
    comm_.after_backward_ms += timed_ms([&] { group_->scatter(g, all, 0); });
  }

  ModelPtr model_;
  GroupPtr group_;
  std::vector<Variable> params_;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_gather_scatter_sync(ModelPtr model, GroupPtr group) {
  return std::make_unique<GatherScatterSync>(std::move(model), std::move(group));
}

}  // namespace ddl::dist::detail
