// RMSprop step.
#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/rmsprop.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/trace/trace.h>

namespace ddl::optim {

RMSprop::RMSprop(std::vector<Variable> params, RMSpropOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"alpha", o.alpha()},
                 {"eps", o.eps()},
                 {"weight_decay", o.weight_decay()},
                 {"momentum", o.momentum()},
                 {"centered", o.centered() ? 1.0 : 0.0}}) {
  DDL_CHECK(o.lr() >= 0 && o.eps() >= 0 && o.alpha() >= 0 && o.momentum() >= 0 && o.weight_decay() >= 0,
            "RMSprop: lr, alpha, eps, momentum and weight_decay must be >= 0 (got lr ", o.lr(), ", alpha ", o.alpha(),
            ", eps ", o.eps(), ", momentum ", o.momentum(), ", weight_decay ", o.weight_decay(), ")");
  add_param_group(std::move(params));
}

void RMSprop::step() {
  DDL_TRACE_SPAN("rmsprop step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor g, State& state) {
    const double lr = group.options["lr"], alpha = group.options["alpha"], eps = group.options["eps"];
    const double wd = group.options["weight_decay"], momentum = group.options["momentum"];
    const bool centered = group.options["centered"] != 0;
    if (!state.count("square_avg")) {
      state["square_avg"] = zeros_like(w);
      if (momentum > 0) state["momentum_buffer"] = zeros_like(w);
      if (centered) state["grad_avg"] = zeros_like(w);
    }
    advance_step(state);
    if (wd != 0) g = add(g, w, wd);
    Tensor& s = state["square_avg"];
    s.mul_(alpha).add_(mul(g, g), 1 - alpha);
    Tensor avg;
    if (centered) {
      Tensor& m = state["grad_avg"];
      m.mul_(alpha).add_(g, 1 - alpha);
      avg = add(sqrt(sub(s, mul(m, m))), eps);
    } else {
      avg = add(sqrt(s), eps);
    }
    if (momentum > 0) {
      Tensor& b = state["momentum_buffer"];
      b.mul_(momentum).add_(div(g, avg));
      w.add_(b, -lr);
    } else {
      w.add_(div(g, avg), -lr);
    }
  });
}

}  // namespace ddl::optim
