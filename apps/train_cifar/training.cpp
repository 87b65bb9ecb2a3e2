// lr schedule construction and buffer synchronisation.
#include "apps/train_cifar/training.h"

#include <cmath>

namespace ddl::apps {

namespace {
// lr unchanged: the "constant" schedule.
class ConstantLR : public optim::LRScheduler {
 public:
  explicit ConstantLR(optim::Optimizer& opt) : LRScheduler(opt) { set_step(0); }
  double lr_at(double base, int64_t) const override { return base; }
};
}  // namespace

std::shared_ptr<optim::LRScheduler> make_schedule(optim::Optimizer& opt, const TrainOptions& o, int64_t steps_per_epoch,
                                                  int64_t total_steps) {
  const int64_t warmup = static_cast<int64_t>(std::llround(o.warmup_epochs * static_cast<double>(steps_per_epoch)));
  const int64_t rest = std::max<int64_t>(total_steps - warmup, 1);
  std::shared_ptr<optim::LRScheduler> main;
  if (o.schedule == "cosine") {
    main = std::make_shared<optim::CosineAnnealingLR>(opt, rest);
  } else if (o.schedule == "step") {
    main = std::make_shared<optim::MultiStepLR>(opt, std::vector<int64_t>{rest / 2, rest * 3 / 4}, 0.1);
  } else {
    main = std::make_shared<ConstantLR>(opt);
  }
  if (warmup == 0) return main;
  return std::make_shared<optim::WarmupLR>(opt, warmup, 0.1, main);
}

void sync_buffers(nn::Module& model, dist::ProcessGroup& group) {
  for (auto& [name, v] : model.named_buffers()) group.broadcast(v.data(), 0);
}

}  // namespace ddl::apps
