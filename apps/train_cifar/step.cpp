// train_step and after_step (see step.h).
#include "apps/train_cifar/step.h"

namespace ddl::apps {

using report::Phase;

StepResult train_step(const StepParts& p, const data::Batch& batch) {
  StepResult r;
  const Tensor x = batch.data.to(p.device);
  r.target = batch.target.to(p.device);
  p.timer.start(Phase::Forward);
  r.logits = p.net.forward(Variable(x));
  r.loss = cross_entropy(r.logits, r.target, p.loss);
  p.timer.start(Phase::Backward);
  p.opt.zero_grad();
  r.loss.backward();  // DDP all-reduces gradient buckets while this runs
  p.timer.start(Phase::CommWait);
  if (p.strategy) p.strategy->after_backward();
  p.timer.start(Phase::Optimizer);  // param-server also pulls the new weights in step()
  if (p.strategy)
    p.strategy->step(p.opt);
  else
    p.opt.step();
  p.timer.start(Phase::CommWait);
  if (p.strategy) p.strategy->after_step();
  p.timer.stop();  // the rest of the step (the accuracy, the schedule, logging) is "other"
  r.lr = p.opt.param_groups()[0].lr();
  if (p.strategy) r.comm = p.strategy->last_comm();  // counted as comm wait
  return r;
}

void after_step(const TrainOptions& o, ft::State& state, dist::ProcessGroup* group, int64_t epoch,
                int64_t step_in_epoch, bool resumed) {
  ft::Position& pos = state.position;
  inject_fault(o, pos.global_step, group ? group->rank() : 0, resumed);
  if (o.snapshot_every_steps > 0 && !o.snapshot.empty() && pos.global_step % o.snapshot_every_steps == 0) {
    pos.epoch = epoch, pos.step_in_epoch = step_in_epoch;
    ft::save(o.snapshot, state, group);  // zero1/zero2/fsdp: the whole state, from rank 0
  }
}

}  // namespace ddl::apps
