// SyncStrategy: the ways data-parallel workers keep their replicas consistent, side by
// side for study (docs/sync.md): ddp, allreduce, gather-scatter, ring and param-server
// synchronise gradients and are mathematically one large-batch SGD; stepwise and
// local-sgd average models instead and are not. One file per strategy in dist/sync/.
// They are teaching code: blocking and simple, except where overlap is the lesson (ddp).
#pragma once

#include <memory>
#include <string>

#include <ddl/dist/process_group.h>
#include <ddl/nn/module.h>
#include <ddl/optim/optimizer.h>

namespace ddl::dist {

// Where one step's communication time went, in milliseconds (steady_clock around the
// blocking calls and waits), by the call it happened in. A caller that times the step's
// phases moves forward_ms, backward_ms and step_ms out of forward, backward and the
// optimizer into communication wait; the two hooks are communication anyway.
struct StepComm {
  double forward_ms = 0;         // in model().forward(): ddp broadcasts rank 0's buffers
  double backward_ms = 0;        // in loss.backward(): ddp waits for its last buckets
  double after_backward_ms = 0;  // allreduce, gather-scatter, ring; param-server's push
  double step_ms = 0;            // in step(): param-server's pull of the new weights
  double after_step_ms = 0;      // stepwise and local-sgd average the models
  double total_ms() const { return forward_ms + backward_ms + after_backward_ms + step_ms + after_step_ms; }
};

// How data-parallel workers keep their replicas consistent. A training step calls:
//   Variable loss = loss_fn(strategy.model().forward(x), y);  opt.zero_grad(); loss.backward();
//   strategy.after_backward();   // gradient strategies average gradients here
//   strategy.step(opt);          // usually opt.step(); param-server differs
//   strategy.after_step();       // model-averaging strategies (stepwise, local-sgd) act here
class SyncStrategy {
 public:
  virtual ~SyncStrategy() = default;
  virtual std::string name() const = 0;  // "ddp", "allreduce", "local-sgd:4", ...
  virtual nn::Module& model() = 0;       // what to call forward on (DDP wraps the model)
  virtual void after_backward() {}
  virtual void step(optim::Optimizer& opt) { opt.step(); }
  virtual void after_step() {}
  // Before a checkpoint, on every rank (collective where it does anything): a strategy that
  // shards the optimizer state (zero1, zero2) gathers it into `opt` on rank to_rank, whose
  // opt.state_tensors() is then the whole state, as one process would hold it.
  virtual void consolidate_optimizer_state(optim::Optimizer& opt, int to_rank) {
    (void)opt;
    (void)to_rank;
  }
  // Before the app uses the wrapped model itself (evaluation, saving): a strategy that
  // shards the parameters (fsdp) gathers them into it here. Every rank must call it.
  virtual void gather_full_model() {}
  // After a resume loaded whole weights into the wrapped model (gathered first with
  // gather_full_model) and whole state into `opt`, on every rank, before the first step: a
  // strategy that shards parameters (fsdp) takes its slices from them. Local, no collective.
  virtual void load_full_state(optim::Optimizer& opt) { (void)opt; }
  // Traffic on process groups of the strategy's own (async-ps's pairs of ranks), which the
  // job group's counters do not see; programs that report bytes add it to those.
  virtual CommStats side_stats() const { return {}; }
  // This rank's communication in the last step, by where it happened: each call
  // overwrites its own field, so fields of calls a strategy does not use stay 0.
  const StepComm& last_comm() const { return comm_; }
  // Their sum: milliseconds this rank spent communicating in the last step.
  double last_comm_ms() const { return comm_.total_ms(); }

 protected:
  StepComm comm_;
};
// spec: ddp | allreduce | gather-scatter | ring | param-server | stepwise | local-sgd:K  (clear ddl::Error otherwise)
std::unique_ptr<SyncStrategy> make_sync_strategy(const std::string& spec, std::shared_ptr<nn::Module> model,
                                                 std::shared_ptr<ProcessGroup> group);

}  // namespace ddl::dist
