// SyncStrategy: the ways data-parallel workers keep their replicas consistent, side by
// side for study (docs/sync.md): ddp, allreduce, gather-scatter, ring and param-server
// synchronise gradients and are mathematically one large-batch SGD; stepwise and
// local-sgd average models instead and are not. One file per strategy in dist/sync/.
// They are teaching code: blocking and simple, except where overlap is the lesson (ddp).
#pragma once

#include <memory>
#include <string>

#include "dist/process_group.h"
#include "nn/module.h"
#include "optim/optimizer.h"

namespace ddl::dist {

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
  // Milliseconds this rank spent in communication during the last step (measured with steady_clock
  // around the blocking calls / waits), for the metrics table.
  double last_comm_ms() const { return last_comm_ms_; }

 protected:
  double last_comm_ms_ = 0;
};
// spec: ddp | allreduce | gather-scatter | ring | param-server | stepwise | local-sgd:K  (clear ddl::Error otherwise)
std::unique_ptr<SyncStrategy> make_sync_strategy(const std::string& spec, std::shared_ptr<nn::Module> model,
                                                 std::shared_ptr<ProcessGroup> group);

}  // namespace ddl::dist
