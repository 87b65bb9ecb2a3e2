// The multi-tensor steps of SGD and Adam/AdamW (PyTorch's foreach implementations,
// torch/optim/sgd.py _multi_tensor_sgd): every parameter whose weight, gradient and state
// are contiguous CPU float32 tensors of one shape in separate storage becomes a slice of
// one flat pass (tensor/ops/multi_tensor_step.h); any other takes the per-tensor step. State
// is made and kept exactly as the per-tensor step keeps it, so the two paths can alternate.
#include <cmath>
#include <set>

#include <ddl/optim/adam.h>
#include <ddl/optim/sgd.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/multi_tensor_step.h>

namespace ddl::optim {
namespace {

bool flat_f32(const Tensor& t, const Tensor& w) {
  return t.defined() && t.dtype() == DType::Float32 && t.device().is_cpu() && t.is_contiguous() &&
         t.shape() == w.shape();
}

// w, grad and the state tensors flat float32 of w's shape, no two sharing storage.
bool qualifies(const Tensor& w, const Tensor& grad, std::initializer_list<const Tensor*> state) {
  if (!flat_f32(w, w) || !flat_f32(grad, w) || grad.shares_storage(w)) return false;
  for (const Tensor* s : state)
    if (s->defined() && (!flat_f32(*s, w) || s->shares_storage(w) || s->shares_storage(grad))) return false;
  return true;
}

// Whether two parameters with gradients share storage (a parameter listed twice in a group,
// or views of one tensor): their slices would race, so the step runs per tensor, in order.
bool params_overlap(const std::vector<ParamGroup>& groups) {
  std::set<const Storage*> seen;
  for (const ParamGroup& g : groups)
    for (const Variable& p : g.params)
      if (p.grad().defined() && p.data().storage() && !seen.insert(p.data().storage().get()).second) return true;
  return false;
}

}  // namespace

void SGD::step_multi_tensor() {
  if (params_overlap(groups_)) return for_each_param(step_param);
  std::vector<detail::SgdSlice> slices;
  for_each_param([&](ParamGroup& group, const Tensor& w, const Tensor& grad, State& state) {
    const double lr = group.options["lr"], momentum = group.options["momentum"];
    const double dampening = group.options["dampening"], wd = group.options["weight_decay"];
    Tensor buf;
    if (momentum != 0)
      if (auto it = state.find("momentum_buffer"); it != state.end()) buf = it->second;
    if (!qualifies(w, grad, {&buf})) return step_param(group, w, grad, state);
    const bool first = momentum != 0 && !buf.defined();
    if (first) buf = state["momentum_buffer"] = empty(w.shape(), TensorOptions(DType::Float32, w.device()));
    w.bump_version();  // in-place writes count, as sgd_update_'s (Storage::version)
    if (buf.defined()) buf.bump_version();
    if (w.numel() == 0) return;
    slices.push_back({.w = w.data<float>(),
                      .g = grad.data<float>(),
                      .buf = buf.defined() ? buf.data<float>() : nullptr,
                      .n = w.numel(),
                      .first = first,
                      .weight_decay = static_cast<float>(wd),
                      .momentum = static_cast<float>(momentum),
                      .one_minus_dampening = static_cast<float>(1 - dampening),
                      .neg_lr = static_cast<float>(-lr),
                      .has_weight_decay = wd != 0,
                      .nesterov = group.options["nesterov"] != 0});
  });
  detail::sgd_step_multi(slices);
}

void Adam::step_multi_tensor() {
  if (params_overlap(groups_))
    return for_each_param(
        [this](ParamGroup& group, const Tensor& w, const Tensor& g, State& state) { step_param(group, w, g, state); });
  std::vector<detail::AdamSlice> slices;
  for_each_param([&](ParamGroup& group, const Tensor& w, const Tensor& grad, State& state) {
    const double lr = group.options["lr"], b1 = group.options["beta1"], b2 = group.options["beta2"];
    const double eps = group.options["eps"], wd = group.options["weight_decay"];
    const bool amsgrad = group.options["amsgrad"] != 0;
    if (!state.count("exp_avg")) {  // as step_param
      state["exp_avg"] = zeros_like(w);
      state["exp_avg_sq"] = zeros_like(w);
    }
    if (amsgrad && !state.count("max_exp_avg_sq")) state["max_exp_avg_sq"] = zeros_like(w);
    const Tensor m = state["exp_avg"], v = state["exp_avg_sq"];
    const Tensor vmax = amsgrad ? state["max_exp_avg_sq"] : Tensor();
    if (!qualifies(w, grad, {&m, &v, &vmax}) || m.shares_storage(v) || (amsgrad && vmax.shares_storage(v)))
      return step_param(group, w, grad, state);
    const double t = advance_step(state);
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    for (const Tensor* s : {&w, &m, &v, &vmax})
      if (s->defined()) s->bump_version();
    if (w.numel() == 0) return;
    slices.push_back({.w = w.data<float>(),
                      .g = grad.data<float>(),
                      .m = m.data<float>(),
                      .v = v.data<float>(),
                      .vmax = amsgrad ? vmax.data<float>() : nullptr,
                      .n = w.numel(),
                      .beta1 = static_cast<float>(b1),
                      .one_minus_beta1 = static_cast<float>(1 - b1),
                      .beta2 = static_cast<float>(b2),
                      .one_minus_beta2 = static_cast<float>(1 - b2),
                      .eps = static_cast<float>(eps),
                      .weight_decay = static_cast<float>(wd),
                      .decay_scale = static_cast<float>(1 - lr * wd),
                      .decoupled = decoupled_,
                      .has_weight_decay = wd != 0,
                      .inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bc2)),
                      .neg_step = static_cast<float>(-lr / bc1)});
  });
  detail::adam_step_multi(slices);
}

}  // namespace ddl::optim
