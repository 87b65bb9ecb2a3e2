// gather-scatter (Wisconsin CS744 assignment 2, part 2a): rank 0 gathers every rank's gradient, averages,
// and scatters the average back. Rank 0 is a hub: it receives (N-1) gradients and sends
// (N-1) averages, so its link carries N-1 times what a ring rank's does. Kept per
// parameter, as in the assignment, so that comparing it with `allreduce` (also per parameter)
// isolates the communication pattern; `ring` and `ddp` show what flattening and
// bucketing add. See Note [Gather-scatter on send/recv].
//
// Note [Gather-scatter on send/recv]
// Gloo's gather and scatter run one collective at a time, so the gather of every
// parameter and the scatter of its average would take turns on the link: data towards the
// hub, then data away from it, each direction idle half the time. Written on send/recv,
// the pattern is the same but the phases overlap: every worker posts the receives of all
// averages, then pushes all its gradients; the hub averages each piece (1 MiB of a
// parameter's gradient) as soon as every rank's copy is in and sends the average back
// while later pieces still arrive. On
// one full-duplex link per host the hub's link then moves (N-1)·B each way at the same
// time: (N-1)·B/rate instead of 2(N-1)·B/rate. The hub holds every worker's gradient at
// once ((N-1)·B bytes), as a parameter server does.
#include <ddl/dist/sync/builtins.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

namespace {

constexpr int kGatherScatterTag = 1 << 24;  // p2p tags from here on belong to gather-scatter

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
    // Each gradient in pieces (a whole tensor when it is not contiguous), so the hub can
    // send the average of a large tensor's first piece while the rest is still arriving.
    std::vector<Tensor> units;
    for (const Tensor& g : gradients_of(params_))
      for (const Tensor& piece : g.is_contiguous() ? pieces_of(g.view({g.numel()})) : std::vector<Tensor>{g})
        units.push_back(piece);
    comm_.after_backward_ms = timed_ms([&] { group_->rank() == 0 ? serve(units) : exchange(units); });
  }

 private:
  static int push_tag(size_t u) { return kGatherScatterTag + 2 * static_cast<int>(u); }
  static int pull_tag(size_t u) { return push_tag(u) + 1; }

  // A worker: announce the receive of every average first, then push every gradient. An
  // average overwrites its gradient only after the hub has received that gradient.
  void exchange(const std::vector<Tensor>& grads) {
    DDL_TRACE_SPAN("gather-scatter push and pull", "sync");
    std::vector<std::shared_ptr<Work>> pulls, pushes;
    for (size_t u = 0; u < grads.size(); ++u) pulls.push_back(group_->recv_async(grads[u], 0, pull_tag(u)));
    for (size_t u = 0; u < grads.size(); ++u) pushes.push_back(group_->send_async(grads[u], 0, push_tag(u)));
    for (auto& w : pushes) w->wait();
    for (auto& w : pulls) w->wait();
  }

  // The hub. rows[u]: [N-1, n_u], row r-1 = rank r's piece u of the gradients.
  void serve(const std::vector<Tensor>& grads) {
    DDL_TRACE_SPAN("gather-scatter serve", "sync");
    const int world = group_->size();
    std::vector<Tensor> rows;
    std::vector<std::vector<std::shared_ptr<Work>>> gathered(grads.size());
    for (size_t u = 0; u < grads.size(); ++u) {
      const Tensor& g = grads[u];
      rows.push_back(empty({world - 1, g.numel()}, TensorOptions(g.dtype(), g.device())));
      for (int r = 1; r < world; ++r)
        gathered[u].push_back(group_->recv_async(rows[u].select(0, r - 1), r, push_tag(u)));
    }
    std::vector<std::shared_ptr<Work>> scattered;
    for (size_t u = 0; u < grads.size(); ++u) {
      for (auto& w : gathered[u]) w->wait();
      // Sum in rank order (deterministic), divide, send the average to every worker.
      const Tensor& g = grads[u];
      for (int r = 1; r < world; ++r) g.add_(rows[u].select(0, r - 1).view(g.shape()));
      g.div_(world);
      for (int r = 1; r < world; ++r) scattered.push_back(group_->send_async(g, r, pull_tag(u)));
    }
    for (auto& w : scattered) w->wait();
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
