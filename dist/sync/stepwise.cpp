// stepwise (the step-wise averaging study's third strategy): after each optimizer
// step, only the first lap of a ring over the model: rank k receives the running
// average of ranks 0..k-1, replaces its model with the average of ranks 0..k and passes
// that on. No second lap: each rank carries on with the average of the ranks up to
// itself. See Note [Stepwise].
//
// Note [Stepwise]
//   rank 0: w0 -> rank 1: (1·w0 + w1)/2 = m1 -> rank 2: (2·m1 + w2)/3 = m2 -> ...
// - The last rank holds the true average of all N models; rank 0 keeps its own.
//   Replicas are not identical: rank k follows the mean of ranks 0..k.
// - Traffic: every rank but the last sends B bytes (the model), every rank but rank 0
//   receives B: (N-1)·B in all, against 2(N-1)·B for a ring all-reduce of the model.
// - Latency: N-1 hops in sequence, pipelined in pieces (rank k forwards a piece as soon as
//   it has averaged it), and nobody waits for a second lap. Sends do not
//   block: rank k waits only for the ranks before it, and rank 0 only for rank 1 to have
//   taken its previous model (checked at its next step), so it runs at most a step ahead.
// - It averages models, not gradients, so it is not the large-batch SGD of the gradient
//   strategies; each rank's optimizer state (momentum) stays its own.
// Floating buffers (BatchNorm statistics) are averaged with the parameters.
#include <ddl/dist/sync/builtins.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/trace.h>

namespace ddl::dist::detail {

namespace {

constexpr int kStepwiseTag = 7;

class StepwiseSync final : public SyncStrategy {
 public:
  StepwiseSync(ModelPtr model, GroupPtr group) : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);
  }
  ~StepwiseSync() override {
    try {
      wait_pending();
    } catch (...) {  // a broken group already reported its error to the caller of after_step
    }
  }
  std::string name() const override { return "stepwise"; }
  nn::Module& model() override { return *model_; }

  void after_step() override {
    const int world = group_->size(), k = group_->rank();
    DDL_TRACE_SPAN("stepwise average models", "sync");
    comm_.after_step_ms = timed_ms([&] { wait_pending(); });
    if (world == 1) return;
    int tag = kStepwiseTag;
    coalesced(floating_state(*model_), [&](const Tensor& mine) {
      // Piece by piece, so rank k forwards the start of its average while the rest is
      // still arriving: the chain costs about one model's transfer, not N-1 of them.
      const std::vector<Tensor> parts = pieces_of(mine);
      std::vector<Tensor> before;
      std::vector<std::shared_ptr<Work>> recvs;
      // Over Gloo every receive is posted first (its sender waits for the announcement);
      // NCCL queues a rank's receives and sends on one stream, so there each receive is
      // posted just before the send it feeds (Note [NCCL point-to-point lanes]).
      const bool post_all_first = mine.device().is_cpu();
      const auto post = [&](size_t j) { recvs[j] = group_->recv_async(before[j], k - 1, tag + int(j)); };
      if (k > 0) {
        before = pieces_of(empty_like(mine));
        recvs.resize(parts.size());
        if (post_all_first)
          for (size_t j = 0; j < parts.size(); ++j) post(j);
      }
      for (size_t j = 0; j < parts.size(); ++j) {
        if (k > 0) {
          if (!post_all_first) post(j);
          // running mean of ranks 0..k = (k · mean of 0..k-1 + mine) / (k + 1)
          comm_.after_step_ms += timed_ms([&] { recvs[j]->wait(); });
          parts[j].add_(before[j], k).div_(k + 1);
        }
        // Send on without waiting: `mine` stays alive in pending_ until the next step.
        if (k < world - 1) pending_.push_back({mine, group_->send_async(parts[j], k + 1, tag + int(j))});
      }
      tag += static_cast<int>(parts.size());
    });
  }

 private:
  void wait_pending() {
    for (auto& p : pending_) p.work->wait();
    pending_.clear();
  }

  struct Pending {
    Tensor buffer;
    std::shared_ptr<Work> work;
  };
  ModelPtr model_;
  GroupPtr group_;
  std::vector<Pending> pending_;
};

}  // namespace

std::unique_ptr<SyncStrategy> make_stepwise_sync(ModelPtr model, GroupPtr group) {
  return std::make_unique<StepwiseSync>(std::move(model), std::move(group));
}

}  // namespace ddl::dist::detail
