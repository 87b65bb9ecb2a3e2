// Lab ps: a parameter server (Li et al., OSDI 2014; TensorFlow 1's and MXNet's design) on
// send and recv. Rank 0 is the server: it holds the authoritative weights and the only
// optimizer that steps. Every step the workers push their gradients to it, it averages
// them (its own included: it also trains on a shard), steps, and sends the new weights
// (and buffers) back to every worker. Compare lab ring, where no rank is special.
// The reference marks its solution regions; labs/make_skeleton.py replaces them to make
// the students' ps_skeleton.cpp (labs/ps/README.md).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <ddl/dist/sync/common.h>
#include <ddl/tensor/core/factory.h>

namespace {

using namespace ddl;
using namespace ddl::dist;

constexpr int kPushTag = 13 << 20, kPullTag = kPushTag + 1;

// Push. Every worker sends its flat gradient to rank 0; on return rank 0's flat holds the
// sum of all N ranks' gradients, added in rank order (0, 1, ..., N-1). Workers' flat is
// left as it was: they get weights back, not an average.
void push_gradients(ProcessGroup& group, const Tensor& flat) {
  // BEGIN SOLUTION push_gradients
  const int rank = group.rank(), world = group.size();
  if (rank != 0) {
    group.send(flat, 0, kPushTag);
    return;
  }
  // Post every receive before waiting on any, so no worker's push waits for another's.
  std::vector<Tensor> from(world);
  std::vector<std::shared_ptr<Work>> recvs;
  for (int peer = 1; peer < world; ++peer) {
    from[peer] = empty_like(flat);
    recvs.push_back(group.recv_async(from[peer], peer, kPushTag));
  }
  for (int peer = 1; peer < world; ++peer) {
    recvs[peer - 1]->wait();
    flat.add_(from[peer]);  // rank order: the server's sum does not depend on arrival order
  }
  // END SOLUTION
}

// Pull. Rank 0 sends its flat (new weights and buffers) to every worker, which receives it
// in place. On return every rank's flat holds rank 0's bits.
void pull_weights(ProcessGroup& group, const Tensor& flat) {
  // BEGIN SOLUTION pull_weights
  const int rank = group.rank(), world = group.size();
  if (rank != 0) {
    group.recv(flat, 0, kPullTag);
    return;
  }
  std::vector<std::shared_ptr<Work>> sends;
  for (int peer = 1; peer < world; ++peer) sends.push_back(group.send_async(flat, peer, kPullTag));
  for (auto& w : sends) w->wait();
  // END SOLUTION
}

// Parameters and buffers (BatchNorm's running statistics): what the server sends back.
std::vector<Tensor> model_state(const nn::Module& model) {
  std::vector<Tensor> state;
  for (auto& [name, v] : model.named_state()) state.push_back(v.data());
  return state;
}

class ParamServerSync final : public SyncStrategy {
 public:
  ParamServerSync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group)
      : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);  // every replica starts from rank 0's weights
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return "student-param-server"; }
  nn::Module& model() override { return *model_; }

  // After backward: the push. Only the server's gradients become the average.
  void after_backward() override {
    comm_.after_backward_ms = timed_ms([&] {
      coalesced(gradients_of(params_), [&](const Tensor& flat) {
        push_gradients(*group_, flat);
        if (group_->rank() == 0) flat.div_(group_->size());
      });
    });
  }

  // Instead of every rank's opt.step(): who steps (your part), then the pull. `opt` is
  // this rank's own optimizer over its own replica. The pull is reported as step_ms, so
  // train_cifar counts it as communication, not as optimizer work.
  void step(optim::Optimizer& opt) override {
    // BEGIN SOLUTION server_step
    if (group_->rank() == 0) opt.step();  // the workers' optimizers never step: no momentum there
    // END SOLUTION
    comm_.step_ms =
        timed_ms([&] { coalesced(model_state(*model_), [&](const Tensor& flat) { pull_weights(*group_, flat); }); });
  }

 private:
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Variable> params_;
};

}  // namespace

extern "C" void ddl_register_strategies() {
  register_sync_strategy(
      "student-param-server",
      [](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
        return std::make_unique<ParamServerSync>(std::move(model), std::move(group));
      },
      "rank 0 averages the pushed gradients, steps and sends the weights back, on send/recv (lab ps)");
}
