// Rprop step, in the order of PyTorch 1.13's _single_tensor_rprop.
#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/rprop.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/trace/trace.h>

namespace ddl::optim {

Rprop::Rprop(std::vector<Variable> params, RpropOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"etaminus", std::get<0>(o.etas())},
                 {"etaplus", std::get<1>(o.etas())},
                 {"step_size_min", std::get<0>(o.step_sizes())},
                 {"step_size_max", std::get<1>(o.step_sizes())},
                 {"maximize", o.maximize() ? 1.0 : 0.0}}) {
  const auto [minus, plus] = o.etas();
  DDL_CHECK(o.lr() >= 0, "Rprop: invalid learning rate: ", o.lr());
  DDL_CHECK(0 < minus && minus < 1 && 1 < plus, "Rprop: invalid eta values: ", minus, ", ", plus,
            " (need 0 < etaminus < 1 < etaplus)");
  add_param_group(std::move(params));
}

void Rprop::step() {
  DDL_TRACE_SPAN("rprop step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor g, State& state) {
    const double minus = group.options["etaminus"], plus = group.options["etaplus"];
    const double lo = group.options["step_size_min"], hi = group.options["step_size_max"];
    if (group.options["maximize"] != 0) g = neg(g);
    if (!state.count("prev")) {
      state["prev"] = zeros_like(w);
      state["step_size"] = full_like(g, group.options["lr"]);
    }
    advance_step(state);
    Tensor& prev = state["prev"];
    Tensor& step_size = state["step_size"];
    // The sign of g * prev picks the factor: etaplus (same sign), etaminus (flipped), 1 (either is 0 or NaN).
    const Tensor s = sign(mul(g, prev));
    const TensorOptions o(w.dtype(), w.device());
    const Tensor factor =
        where(gt(s, 0.0), scalar_tensor(plus, o), where(lt(s, 0.0), scalar_tensor(minus, o), scalar_tensor(1.0, o)));
    step_size.copy_(clamp(mul(step_size, factor), lo, hi));
    // A flipped gradient counts as 0: no step now, and no sign comparison next time.
    const Tensor g_used = where(eq(factor, minus), zeros({}, o), g);
    w.add_(mul(sign(g_used), step_size), -1.0);
    prev.copy_(g_used);
  });
}

}  // namespace ddl::optim
