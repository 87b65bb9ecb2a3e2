// Adagrad step.
#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/adagrad.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/trace/trace.h>

namespace ddl::optim {

Adagrad::Adagrad(std::vector<Variable> params, AdagradOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"lr_decay", o.lr_decay()},
                 {"weight_decay", o.weight_decay()},
                 {"initial_accumulator_value", o.initial_accumulator_value()},
                 {"eps", o.eps()}}) {
  DDL_CHECK(
      o.lr() >= 0 && o.lr_decay() >= 0 && o.weight_decay() >= 0 && o.initial_accumulator_value() >= 0 && o.eps() >= 0,
      "Adagrad: lr, lr_decay, weight_decay, initial_accumulator_value and eps must be >= 0 (got lr ", o.lr(),
      ", lr_decay ", o.lr_decay(), ", weight_decay ", o.weight_decay(), ", initial_accumulator_value ",
      o.initial_accumulator_value(), ", eps ", o.eps(), ")");
  add_param_group(std::move(params));
}

void Adagrad::step() {
  DDL_TRACE_SPAN("adagrad step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor g, State& state) {
    const double lr = group.options["lr"], lr_decay = group.options["lr_decay"], eps = group.options["eps"];
    const double wd = group.options["weight_decay"];
    if (!state.count("sum")) state["sum"] = full_like(w, group.options["initial_accumulator_value"]);
    const double t = advance_step(state);
    if (wd != 0) g = add(g, w, wd);
    const double clr = lr / (1 + (t - 1) * lr_decay);
    Tensor& s = state["sum"];
    s.add_(mul(g, g));
    w.add_(div(g, add(sqrt(s), eps)), -clr);
  });
}

}  // namespace ddl::optim
