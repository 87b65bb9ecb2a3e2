// Lab p2p (Wisconsin CS744 assignment 2, parts 2a and 2b): two gradient strategies
// written on send and recv alone. student-gather-scatter: every rank sends its
// gradient to rank 0, which averages and sends the mean back. student-allreduce: every
// rank sends its gradient to every other rank and averages all of them itself.
// The reference marks its solution regions; labs/make_skeleton.py replaces them to make
// the students' p2p_skeleton.cpp (labs/p2p/README.md). Nothing else is the students' to edit.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <ddl/dist/sync/common.h>
#include <ddl/tensor/core/factory.h>

namespace {

using namespace ddl;
using namespace ddl::dist;

constexpr int kGatherTag = 11 << 20, kScatterTag = kGatherTag + 1, kExchangeTag = kGatherTag + 2;

// Part 2a. flat <- the sum of every rank's flat: rank 0 receives every other rank's
// gradient, adds them in rank order, and sends the sum back to each.
void gather_scatter_sum(ProcessGroup& group, const Tensor& flat) {
  // BEGIN SOLUTION gather_scatter_sum
  const int rank = group.rank(), world = group.size();
  if (rank != 0) {
    group.send(flat, 0, kGatherTag);
    group.recv(flat, 0, kScatterTag);
    return;
  }
  const Tensor incoming = empty_like(flat);
  for (int peer = 1; peer < world; ++peer) {
    group.recv(incoming, peer, kGatherTag);
    flat.add_(incoming);
  }
  for (int peer = 1; peer < world; ++peer) group.send(flat, peer, kScatterTag);
  // END SOLUTION
}

// Part 2b. flat <- the sum of every rank's flat: each rank sends its own flat to every
// other rank and adds all N of them in rank order, so every rank gets the same bits.
void all_to_all_sum(ProcessGroup& group, const Tensor& flat) {
  // BEGIN SOLUTION all_to_all_sum
  const int rank = group.rank(), world = group.size();
  // Post every receive and every send before waiting on any: a rank that waited on one
  // peer before posting its receive from another could wait on that peer in a cycle.
  std::vector<Tensor> from(world);
  std::vector<std::shared_ptr<Work>> posted;
  for (int peer = 0; peer < world; ++peer)
    if (peer != rank) {
      from[peer] = empty_like(flat);
      posted.push_back(group.recv_async(from[peer], peer, kExchangeTag));
    }
  for (int peer = 0; peer < world; ++peer)
    if (peer != rank) posted.push_back(group.send_async(flat, peer, kExchangeTag));
  for (auto& w : posted) w->wait();
  from[rank] = flat.clone();
  flat.zero_();
  for (int peer = 0; peer < world; ++peer) flat.add_(from[peer]);  // rank order on every rank: the same bits
  // END SOLUTION
}

using SumFn = void (*)(ProcessGroup&, const Tensor&);

// The strategy around either sum: flatten the gradients, sum them, divide by N.
class SumSync final : public SyncStrategy {
 public:
  SumSync(std::string name, SumFn sum, std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group)
      : name_(std::move(name)), sum_(sum), model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);  // every replica starts from rank 0's weights
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return name_; }
  nn::Module& model() override { return *model_; }
  void after_backward() override {
    comm_.after_backward_ms = timed_ms([&] {
      coalesced(gradients_of(params_), [&](const Tensor& flat) {
        sum_(*group_, flat);
        flat.div_(group_->size());
      });
    });
  }

 private:
  std::string name_;
  SumFn sum_;
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Variable> params_;
};

}  // namespace

extern "C" void ddl_register_strategies() {
  register_sync_strategy(
      "student-gather-scatter",
      [](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
        return std::make_unique<SumSync>("student-gather-scatter", gather_scatter_sum, std::move(model),
                                         std::move(group));
      },
      "CS744 A2 part 2a: gather to rank 0 and scatter back, on send/recv (lab p2p)");
  register_sync_strategy(
      "student-allreduce",
      [](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
        return std::make_unique<SumSync>("student-allreduce", all_to_all_sum, std::move(model), std::move(group));
      },
      "CS744 A2 part 2b: every rank sends its gradient to every other, on send/recv (lab p2p)");
}
