// Adagrad step.
#include "optim/adagrad.h"

#include "autograd/grad_mode.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "trace/trace.h"

namespace ddl::optim {

Adagrad::Adagrad(std::vector<Variable> params, AdagradOptions o)
    : Optimizer({{"lr", o.lr},
                 {"lr_decay", o.lr_decay},
                 {"weight_decay", o.weight_decay},
                 {"initial_accumulator_value", o.initial_accumulator_value},
                 {"eps", o.eps}}) {
  DDL_CHECK(o.lr >= 0 && o.lr_decay >= 0 && o.weight_decay >= 0 && o.initial_accumulator_value >= 0 && o.eps >= 0,
            "Adagrad: lr, lr_decay, weight_decay, initial_accumulator_value and eps must be >= 0 (got lr ", o.lr,
            ", lr_decay ", o.lr_decay, ", weight_decay ", o.weight_decay, ", initial_accumulator_value ",
            o.initial_accumulator_value, ", eps ", o.eps, ")");
  add_param_group(std::move(params));
}

void Adagrad::step() {
  DDL_TRACE_SPAN("adagrad step", "optimizer");
  NoGradGuard no_grad;
  size_t index = 0;
  for (auto& group : groups_) {
    const double lr = group.options["lr"], lr_decay = group.options["lr_decay"], eps = group.options["eps"];
    const double wd = group.options["weight_decay"], init = group.options["initial_accumulator_value"];
    for (auto& p : group.params) {
      auto& state = state_of(index++);
      if (!p.grad().defined()) continue;
      const Tensor& w = p.data();
      Tensor g = p.grad();
      if (!state.count("step")) {
        state["step"] = zeros({}, DType::Float64);
        state["sum"] = full_like(w, init);
      }
      const double t = state["step"].item() + 1;
      state["step"].fill_(t);
      if (wd != 0) g = add(g, w, wd);
      const double clr = lr / (1 + (t - 1) * lr_decay);
      Tensor& s = state["sum"];
      s.add_(mul(g, g));
      w.add_(div(g, add(sqrt(s), eps)), -clr);
    }
  }
}

}  // namespace ddl::optim
