// One training step of train_cifar, as a teacher draws it (forward, loss, backward,
// synchronise, update), with the step-time phases (report::StepTimer) recorded around
// each call; and what follows a step: the test-only fault hooks and the periodic
// snapshot. Kept out of main.cpp so that its loop reads as those calls.
#pragma once

#include <cstdint>

#include "apps/train_cifar/options.h"
#include <ddl/data/dataloader.h>
#include <ddl/dist/sync/strategy.h>
#include <ddl/ft/ft.h>
#include <ddl/nn/functional.h>
#include <ddl/report/step_timer.h>

namespace ddl::apps {

struct StepParts {
  nn::Module& net;  // what forward is called on (DDP's wrapper, FSDP, or the model)
  optim::Optimizer& opt;
  dist::SyncStrategy* strategy;  // null in a one-process run
  report::StepTimer& timer;
  Device device;
  CrossEntropyOptions loss;
};

struct StepResult {
  Variable logits, loss;
  Tensor target;        // the batch's labels, on the device
  double lr = 0;        // the rate this step used, before the schedule moves on
  dist::StepComm comm;  // where the strategy communicated (forward, backward, step)
};

// Runs one step on `batch`; the timer is stopped on return (what follows is "other").
StepResult train_step(const StepParts& parts, const data::Batch& batch);

// After global step state.position.global_step, which ended batch step_in_epoch - 1 of
// `epoch`: --crash-at-step / --hang-at-step (never in a run that resumed), then a snapshot
// every --snapshot-every-steps steps (a collective: every rank calls this).
void after_step(const TrainOptions& o, ft::State& state, dist::ProcessGroup* group, int64_t epoch,
                int64_t step_in_epoch, bool resumed);

}  // namespace ddl::apps
