// Adamax, NAdam and RAdam steps, in the order of PyTorch 1.13's _single_tensor_* functions.
#include <cmath>
#include <initializer_list>
#include <map>
#include <string>

#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/adam_variants.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/trace/trace.h>

namespace ddl::optim {

namespace {

// PyTorch's checks of lr, eps, betas and weight_decay, in its order and with its words.
void check_adam_like(const char* name, double lr, double eps, double b1, double b2, double wd) {
  DDL_CHECK(lr >= 0, name, ": invalid learning rate: ", lr);
  DDL_CHECK(eps >= 0, name, ": invalid epsilon value: ", eps);
  DDL_CHECK(b1 >= 0 && b1 < 1, name, ": invalid beta parameter at index 0: ", b1);
  DDL_CHECK(b2 >= 0 && b2 < 1, name, ": invalid beta parameter at index 1: ", b2);
  DDL_CHECK(wd >= 0, name, ": invalid weight_decay value: ", wd);
}

// The state entries `names`, zeros shaped as w, on first use.
void init_zeros(std::map<std::string, Tensor>& state, const Tensor& w, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (!state.count(n)) state[n] = zeros_like(w);
}

}  // namespace

Adamax::Adamax(std::vector<Variable> params, AdamaxOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"beta1", std::get<0>(o.betas())},
                 {"beta2", std::get<1>(o.betas())},
                 {"eps", o.eps()},
                 {"weight_decay", o.weight_decay()},
                 {"maximize", o.maximize() ? 1.0 : 0.0}}) {
  check_adam_like("Adamax", o.lr(), o.eps(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.weight_decay());
  add_param_group(std::move(params));
}

void Adamax::step() {
  DDL_TRACE_SPAN("adamax step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor g, State& state) {
    const double lr = group.options["lr"], b1 = group.options["beta1"], b2 = group.options["beta2"];
    const double eps = group.options["eps"], wd = group.options["weight_decay"];
    if (group.options["maximize"] != 0) g = neg(g);
    init_zeros(state, w, {"exp_avg", "exp_inf"});
    const double t = advance_step(state);
    if (wd != 0) g = add(g, w, wd);
    Tensor& m = state["exp_avg"];
    Tensor& u = state["exp_inf"];
    m.mul_(b1).add_(g, 1 - b1);
    // amax over [b2 u, |g| + eps]: NaN propagates, as there.
    u.copy_(maximum(mul(u, b2), add(abs(g), eps)));
    const double clr = lr / (1 - std::pow(b1, t));
    w.add_(div(m, u), -clr);
  });
}

NAdam::NAdam(std::vector<Variable> params, NAdamOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"beta1", std::get<0>(o.betas())},
                 {"beta2", std::get<1>(o.betas())},
                 {"eps", o.eps()},
                 {"weight_decay", o.weight_decay()},
                 {"momentum_decay", o.momentum_decay()}}) {
  check_adam_like("NAdam", o.lr(), o.eps(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.weight_decay());
  DDL_CHECK(o.momentum_decay() >= 0, "NAdam: invalid momentum_decay value: ", o.momentum_decay());
  add_param_group(std::move(params));
}

void NAdam::step() {
  DDL_TRACE_SPAN("nadam step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor g, State& state) {
    const double lr = group.options["lr"], b1 = group.options["beta1"], b2 = group.options["beta2"];
    const double eps = group.options["eps"], wd = group.options["weight_decay"];
    const double decay = group.options["momentum_decay"];
    init_zeros(state, w, {"exp_avg", "exp_avg_sq"});
    if (!state.count("mu_product")) state["mu_product"] = ones({}, DType::Float32);
    const double t = advance_step(state);
    const double bc2 = 1 - std::pow(b2, t);
    if (wd != 0) g = add(g, w, wd);
    const double mu = b1 * (1.0 - 0.5 * std::pow(0.96, t * decay));
    const double mu_next = b1 * (1.0 - 0.5 * std::pow(0.96, (t + 1) * decay));
    // PyTorch keeps mu_product in a float32 tensor: each product rounds to float32.
    Tensor& product = state["mu_product"];
    const float mp = static_cast<float>(product.item()) * static_cast<float>(mu);
    const float mp_next = mp * static_cast<float>(mu) * static_cast<float>(mu_next);
    product.fill_(mp);
    Tensor& m = state["exp_avg"];
    Tensor& v = state["exp_avg_sq"];
    m.mul_(b1).add_(g, 1 - b1);
    v.mul_(b2).add_(mul(g, g), 1 - b2);
    const Tensor denom = add(sqrt(div(v, bc2)), eps);
    w.add_(div(g, denom), -lr * (1.0 - mu) / (1.0 - mp));
    w.add_(div(m, denom), -lr * mu_next / (1.0 - mp_next));
  });
}

RAdam::RAdam(std::vector<Variable> params, RAdamOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"beta1", std::get<0>(o.betas())},
                 {"beta2", std::get<1>(o.betas())},
                 {"eps", o.eps()},
                 {"weight_decay", o.weight_decay()}}) {
  check_adam_like("RAdam", o.lr(), o.eps(), std::get<0>(o.betas()), std::get<1>(o.betas()), o.weight_decay());
  add_param_group(std::move(params));
}

void RAdam::step() {
  DDL_TRACE_SPAN("radam step", "optimizer");
  NoGradGuard no_grad;
  for_each_param([](ParamGroup& group, const Tensor& w, Tensor g, State& state) {
    const double lr = group.options["lr"], b1 = group.options["beta1"], b2 = group.options["beta2"];
    const double eps = group.options["eps"], wd = group.options["weight_decay"];
    init_zeros(state, w, {"exp_avg", "exp_avg_sq"});
    const double t = advance_step(state);
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    if (wd != 0) g = add(g, w, wd);
    Tensor& m = state["exp_avg"];
    Tensor& v = state["exp_avg_sq"];
    m.mul_(b1).add_(g, 1 - b1);
    v.mul_(b2).add_(mul(g, g), 1 - b2);
    const Tensor corrected = div(m, bc1);
    // The length of the approximated simple moving average, and its limit (the paper's rho).
    const double rho_inf = 2 / (1 - b2) - 1;
    const double rho_t = rho_inf - 2 * t * std::pow(b2, t) / bc2;
    if (rho_t > 5.0) {
      const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
      const Tensor adaptive_lr =
          div(scalar_tensor(std::sqrt(bc2), TensorOptions(w.dtype(), w.device())), add(sqrt(v), eps));
      w.add_(mul(mul(mul(corrected, lr), adaptive_lr), rect), -1.0);
    } else {
      w.add_(mul(corrected, lr), -1.0);
    }
  });
}

}  // namespace ddl::optim
