// SGD step.
#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/sgd.h>
#include <ddl/tensor/ops/sgd_update.h>
#include <ddl/trace/trace.h>

namespace ddl::optim {

SGD::SGD(std::vector<Variable> params, SGDOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"momentum", o.momentum()},
                 {"dampening", o.dampening()},
                 {"weight_decay", o.weight_decay()},
                 {"nesterov", o.nesterov() ? 1.0 : 0.0}}),
      multi_tensor_(o.multi_tensor()) {
  DDL_CHECK(o.lr() >= 0 && o.momentum() >= 0 && o.weight_decay() >= 0,
            "SGD: lr, momentum and weight_decay must be >= 0");
  DDL_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0),
            "SGD: nesterov needs momentum > 0 and dampening 0");
  add_param_group(std::move(params));
}

void SGD::step() {
  DDL_TRACE_SPAN("sgd step", "optimizer");
  NoGradGuard no_grad;
  if (multi_tensor_) return step_multi_tensor();
  for_each_param(step_param);
}

void SGD::step_param(ParamGroup& group, const Tensor& w, const Tensor& grad, State& state) {
  const SgdUpdate o{.lr = group.options["lr"],
                    .momentum = group.options["momentum"],
                    .dampening = group.options["dampening"],
                    .weight_decay = group.options["weight_decay"],
                    .nesterov = group.options["nesterov"] != 0};
  // state["momentum_buffer"] is PyTorch's, made on the first step with momentum.
  Tensor buf;
  if (o.momentum != 0) {
    if (auto it = state.find("momentum_buffer"); it != state.end()) buf = it->second;
  }
  sgd_update_(w, grad, buf, o);
  if (o.momentum != 0) state["momentum_buffer"] = buf;
}

}  // namespace ddl::optim
