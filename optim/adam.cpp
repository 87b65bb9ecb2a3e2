// Adam and AdamW steps.
#include <cmath>

#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/adam.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/trace/trace.h>

namespace ddl::optim {

Adam::Adam(std::vector<Variable> params, AdamOptions o, bool decoupled)
    : Optimizer({{"lr", o.lr()},
                 {"beta1", std::get<0>(o.betas())},
                 {"beta2", std::get<1>(o.betas())},
                 {"eps", o.eps()},
                 {"weight_decay", o.weight_decay()},
                 {"amsgrad", o.amsgrad() ? 1.0 : 0.0}}),
      decoupled_(decoupled),
      multi_tensor_(o.multi_tensor()) {
  const auto [beta1, beta2] = o.betas();
  DDL_CHECK(o.lr() >= 0 && o.eps() >= 0 && beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1,
            decoupled ? "AdamW" : "Adam", ": invalid hyper-parameters (need lr, eps >= 0 and betas in [0, 1))");
  add_param_group(std::move(params));
}

AdamW::AdamW(std::vector<Variable> params, AdamWOptions o)
    : Adam(std::move(params),
           AdamOptions(o.lr())
               .betas(o.betas())
               .eps(o.eps())
               .weight_decay(o.weight_decay())
               .amsgrad(o.amsgrad())
               .multi_tensor(o.multi_tensor()),
           true) {}

void Adam::step() {
  DDL_TRACE_SPAN("adam step", "optimizer");
  NoGradGuard no_grad;
  if (multi_tensor_) return step_multi_tensor();
  for_each_param(
      [this](ParamGroup& group, const Tensor& w, const Tensor& g, State& state) { step_param(group, w, g, state); });
}

void Adam::step_param(ParamGroup& group, const Tensor& w, Tensor g, State& state) const {
  const double lr = group.options["lr"], b1 = group.options["beta1"], b2 = group.options["beta2"];
  const double eps = group.options["eps"], wd = group.options["weight_decay"];
  const bool amsgrad = group.options["amsgrad"] != 0;
  if (!state.count("exp_avg")) {
    state["exp_avg"] = zeros_like(w);
    state["exp_avg_sq"] = zeros_like(w);
  }
  if (amsgrad && !state.count("max_exp_avg_sq")) state["max_exp_avg_sq"] = zeros_like(w);
  const double t = advance_step(state);
  if (wd != 0) {
    if (decoupled_)
      w.mul_(1 - lr * wd);
    else
      g = add(g, w, wd);
  }
  Tensor& m = state["exp_avg"];
  Tensor& v = state["exp_avg_sq"];
  m.mul_(b1).add_(g, 1 - b1);
  v.mul_(b2).add_(mul(g, g), 1 - b2);
  const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
  const Tensor* second = &v;
  if (amsgrad) {  // the running maximum of v normalises the step (PyTorch's max_exp_avg_sq)
    Tensor& vmax = state["max_exp_avg_sq"];
    vmax.copy_(maximum(vmax, v));
    second = &vmax;
  }
  const Tensor denom = add(div(sqrt(*second), std::sqrt(bc2)), eps);
  w.add_(div(m, denom), -lr / bc1);
}

}  // namespace ddl::optim
