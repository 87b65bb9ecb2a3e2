// A student's strategy, written outside ddl with its installed headers only: a binomial-
// tree all-reduce of the flattened gradients (reduce to rank 0 in log2(N) rounds, then
// broadcast back down the same tree). Built as a plugin (-shared -fPIC): train_cifar and
// sync_study --plugin libstudent_tree.so --sync tree load it (docs/sync.md). The tests
// build it twice more: with STUDENT_STRATEGY_NAME "allreduce" (a name already taken)
// and with STUDENT_REGISTER_NOTHING (a plugin that forgets to register).
#include <memory>
#include <string>

#include <ddl/dist/sync/common.h>
#include <ddl/tensor/core/factory.h>

#ifndef STUDENT_STRATEGY_NAME
#define STUDENT_STRATEGY_NAME "tree"
#endif

namespace {

using namespace ddl;
using namespace ddl::dist;

constexpr int kTreeTag = 7 << 20;  // p2p tags this strategy uses (others use theirs)

// flat ← sum over all ranks. Reduce: at round `mask`, a rank whose lowest set bit is
// `mask` sends its partial sum to rank - mask and drops out. Broadcast: the same tree
// in reverse order of rounds.
void tree_all_reduce(ProcessGroup& group, const Tensor& flat) {
  const int rank = group.rank(), world = group.size();
  const Tensor incoming = empty_like(flat);
  for (int mask = 1; mask < world; mask <<= 1) {
    if (rank & mask) {
      group.send(flat, rank - mask, kTreeTag);
      break;
    }
    if (rank + mask < world) {
      group.recv(incoming, rank + mask, kTreeTag);
      flat.add_(incoming);
    }
  }
  int top = 1;  // the first power of two >= world: every rank walks every round down
  while (top < world) top <<= 1;
  for (int mask = top >> 1; mask >= 1; mask >>= 1) {
    if (rank % (2 * mask) == 0 && rank + mask < world)
      group.send(flat, rank + mask, kTreeTag + 1);
    else if (rank % (2 * mask) == mask)
      group.recv(flat, rank - mask, kTreeTag + 1);
  }
}

class TreeSync final : public SyncStrategy {
 public:
  TreeSync(std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group)
      : model_(std::move(model)), group_(std::move(group)) {
    broadcast_state(*model_, *group_);  // every replica starts from rank 0's weights
    params_ = trainable_parameters(*model_);
  }
  std::string name() const override { return STUDENT_STRATEGY_NAME; }
  nn::Module& model() override { return *model_; }
  void after_backward() override {
    const int world = group_->size();
    comm_.after_backward_ms = timed_ms([&] {
      coalesced(gradients_of(params_), [&](const Tensor& flat) {
        tree_all_reduce(*group_, flat);
        flat.div_(world);  // the mean of the ranks' gradients
      });
    });
  }

 private:
  std::shared_ptr<nn::Module> model_;
  std::shared_ptr<ProcessGroup> group_;
  std::vector<Variable> params_;
};

}  // namespace

extern "C" void ddl_register_strategies() {
#ifndef STUDENT_REGISTER_NOTHING
  register_sync_strategy(
      STUDENT_STRATEGY_NAME,
      [](std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group) {
        return std::make_unique<TreeSync>(std::move(model), std::move(group));
      },
      "binomial-tree all-reduce (a student's plugin)");
#endif
}
