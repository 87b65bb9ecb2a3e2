// ASGD step, in the order of PyTorch 1.13's _single_tensor_asgd.
#include <algorithm>
#include <cmath>

#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/asgd.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/trace/trace.h>

namespace ddl::optim {

ASGD::ASGD(std::vector<Variable> params, ASGDOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"lambd", o.lambd()},
                 {"alpha", o.alpha()},
                 {"t0", o.t0()},
                 {"weight_decay", o.weight_decay()},
                 {"maximize", o.maximize() ? 1.0 : 0.0}}) {
  DDL_CHECK(o.lr() >= 0, "ASGD: invalid learning rate: ", o.lr());
  DDL_CHECK(o.weight_decay() >= 0, "ASGD: invalid weight_decay value: ", o.weight_decay());
  add_param_group(std::move(params));
}

void ASGD::step() {
  DDL_TRACE_SPAN("asgd step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor g, State& state) {
    const double lr = group.options["lr"], lambd = group.options["lambd"], alpha = group.options["alpha"];
    const double t0 = group.options["t0"], wd = group.options["weight_decay"];
    if (group.options["maximize"] != 0) g = neg(g);
    if (!state.count("ax")) {
      state["eta"] = scalar_tensor(lr, DType::Float32);
      state["mu"] = ones({}, DType::Float32);
      state["ax"] = zeros_like(w);
    }
    const double t = advance_step(state);
    if (wd != 0) g = add(g, w, wd);
    const double eta = state["eta"].item(), mu = state["mu"].item();
    w.mul_(1 - lambd * eta);
    w.add_(g, -eta);
    Tensor& ax = state["ax"];
    if (mu != 1)
      ax.add_(mul(sub(w, ax), mu));
    else
      ax.copy_(w);
    state["eta"].fill_(lr / std::pow(1 + lambd * lr * t, alpha));  // rounded to float32 by the fill
    state["mu"].fill_(1 / std::max(1.0, t - t0));
  });
}

}  // namespace ddl::optim
