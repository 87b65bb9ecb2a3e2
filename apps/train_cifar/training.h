// Small pieces of the training loop kept out of main.cpp: the lr schedule
// from the flags, and copying rank 0's buffers to every rank before evaluation.
#pragma once

#include <memory>

#include "apps/train_cifar/options.h"
#include "dist/process_group.h"
#include "nn/module.h"
#include "optim/lr_scheduler.h"

namespace ddl::apps {

// Stepped once per optimizer step: optional linear warm-up, then constant,
// cosine (to 0 at the last step) or step (x0.1 at 50% and 75% of training).
std::shared_ptr<optim::LRScheduler> make_schedule(optim::Optimizer& opt, const TrainOptions& o, int64_t steps_per_epoch,
                                                  int64_t total_steps);

// Broadcasts rank 0's buffers (BatchNorm running statistics) to all ranks.
void sync_buffers(nn::Module& model, dist::ProcessGroup& group);

}  // namespace ddl::apps
