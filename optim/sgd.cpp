// SGD step.
#include "optim/sgd.h"

#include "autograd/grad_mode.h"
#include "tensor/elementwise.h"
#include "trace/trace.h"

namespace ddl::optim {

SGD::SGD(std::vector<Variable> params, SGDOptions o)
    : Optimizer({{"lr", o.lr},
                 {"momentum", o.momentum},
                 {"dampening", o.dampening},
                 {"weight_decay", o.weight_decay},
                 {"nesterov", o.nesterov ? 1.0 : 0.0}}) {
  DDL_CHECK(o.lr >= 0 && o.momentum >= 0 && o.weight_decay >= 0, "SGD: lr, momentum and weight_decay must be >= 0");
  DDL_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), "SGD: nesterov needs momentum > 0 and dampening 0");
  add_param_group(std::move(params));
}

void SGD::step() {
  DDL_TRACE_SPAN("sgd step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor d, State& state) {
    const double lr = group.options["lr"], momentum = group.options["momentum"];
    const double dampening = group.options["dampening"], wd = group.options["weight_decay"];
    const bool nesterov = group.options["nesterov"] != 0;
    if (wd != 0) d = add(d, w, wd);
    if (momentum != 0) {
      auto it = state.find("momentum_buffer");
      if (it == state.end()) {
        it = state.emplace("momentum_buffer", d.clone()).first;
      } else {
        it->second.mul_(momentum).add_(d, 1 - dampening);
      }
      d = nesterov ? add(d, it->second, momentum) : it->second;
    }
    w.add_(d, -lr);
  });
}

}  // namespace ddl::optim
