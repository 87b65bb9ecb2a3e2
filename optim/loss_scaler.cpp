// LossScaler: unscaling, inf/NaN detection, skipped steps and the scale
// schedule of torch.cuda.amp.GradScaler (PyTorch 1.13, torch/cuda/amp/grad_scaler.py).
#include <cfloat>
#include <utility>
#include <vector>

#include <ddl/autograd/ops/elementwise.h>
#include <ddl/optim/loss_scaler.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl::optim {

namespace {
// True when every element of g is finite (16-bit gradients are checked in float32).
// Several passes and a host sync: only to confirm what AnyNonFinite flags.
bool all_finite(const Tensor& g) {
  if (g.numel() == 0) return true;
  const bool wide = g.dtype() == DType::Float64;
  const Tensor a = abs(g.to(wide ? DType::Float64 : DType::Float32));
  // NaN fails the comparison, as does inf against the largest finite value.
  const Tensor ok = le(a, wide ? DBL_MAX : FLT_MAX);
  return sum(ok.to(DType::Int64)).item() == static_cast<double>(g.numel());
}

// Note [One sync per unscale]
// Checking each gradient with its own item() would wait for the device once per
// parameter. Instead each gradient's mean (one reading pass, summed in double)
// is folded into a zero scalar per device as flag += 0 * mean: the flag stays 0
// while every mean is finite and turns NaN otherwise, and one item() per device
// reads it. A non-finite element makes the mean non-finite; the converse can
// fail only when finite values sum past the output type's range, so a raised
// flag is confirmed gradient by gradient (all_finite) and the verdict is exact.
class AnyNonFinite {
 public:
  void add(const Tensor& g) {
    if (g.numel() == 0) return;
    Tensor* flag = nullptr;
    for (auto& [device, f] : flags_)
      if (device == g.device()) flag = &f;
    if (flag == nullptr)
      flag = &flags_.emplace_back(g.device(), zeros({}, TensorOptions(DType::Float32, g.device()))).second;
    flag->add_(mean(g), 0.0);  // 0 * inf and 0 * NaN are NaN
  }
  // One item() (a host sync) per device.
  bool raised() const {
    for (const auto& [device, f] : flags_)
      if (f.item() != 0.0) return true;
    return false;
  }

 private:
  std::vector<std::pair<Device, Tensor>> flags_;
};
}  // namespace

LossScaler::LossScaler(LossScalerOptions opts)
    : scale_(opts.init_scale),
      growth_factor_(opts.growth_factor),
      backoff_factor_(opts.backoff_factor),
      growth_interval_(opts.growth_interval),
      enabled_(opts.enabled) {
  DDL_CHECK(opts.init_scale > 0 && opts.growth_factor > 1 && opts.backoff_factor > 0 && opts.backoff_factor < 1 &&
                opts.growth_interval > 0,
            "LossScaler: expected init_scale > 0, growth_factor > 1, 0 < backoff_factor < 1 and growth_interval > 0, "
            "got ",
            opts.init_scale, ", ", opts.growth_factor, ", ", opts.backoff_factor, ", ", opts.growth_interval);
}

Variable LossScaler::scale(const Variable& loss) const { return enabled_ ? mul(loss, scale_) : loss; }

void LossScaler::unscale_(Optimizer& opt) {
  if (!enabled_) return;
  PerOptimizer& st = of(opt);
  DDL_CHECK(!st.unscaled, "LossScaler::unscale_: already called for this optimizer since the last update()");
  const double inv = 1.0 / scale_;
  std::vector<Tensor> grads;
  AnyNonFinite check;  // See Note [One sync per unscale]
  for (ParamGroup& group : opt.param_groups())
    for (Variable& p : group.params) {
      const Tensor g = p.grad();
      if (!g.defined()) continue;
      g.mul_(inv);
      check.add(g);
      grads.push_back(g);
    }
  bool found_inf = false;
  if (check.raised())
    for (const Tensor& g : grads) found_inf = found_inf || !all_finite(g);
  st.unscaled = true;
  st.found_inf = found_inf;
}

bool LossScaler::step(Optimizer& opt) {
  if (!enabled_) {
    opt.step();
    return true;
  }
  if (!of(opt).unscaled) unscale_(opt);
  if (of(opt).found_inf) return false;
  opt.step();
  return true;
}

void LossScaler::update() {
  if (!enabled_) return;
  bool found_inf = false;
  for (const auto& [opt, st] : per_optimizer_) found_inf = found_inf || st.found_inf;
  // Without any unscale_/step this iteration there is nothing to judge: the scale stays.
  if (!per_optimizer_.empty()) {
    if (found_inf) {
      scale_ *= backoff_factor_;
      growth_tracker_ = 0;
    } else if (++growth_tracker_ == growth_interval_) {
      scale_ *= growth_factor_;
      growth_tracker_ = 0;
    }
  }
  per_optimizer_.clear();
}

std::map<std::string, double> LossScaler::state() const {
  return {{"scale", scale_},
          {"growth_factor", growth_factor_},
          {"backoff_factor", backoff_factor_},
          {"growth_interval", static_cast<double>(growth_interval_)},
          {"growth_tracker", static_cast<double>(growth_tracker_)}};
}

void LossScaler::load_state(const std::map<std::string, double>& state) {
  for (const char* key : {"scale", "growth_factor", "backoff_factor", "growth_interval", "growth_tracker"})
    DDL_CHECK(state.count(key) == 1, "LossScaler::load_state: missing '", key, "'");
  scale_ = state.at("scale");
  growth_factor_ = state.at("growth_factor");
  backoff_factor_ = state.at("backoff_factor");
  growth_interval_ = static_cast<int64_t>(state.at("growth_interval"));
  growth_tracker_ = static_cast<int64_t>(state.at("growth_tracker"));
  per_optimizer_.clear();
}

}  // namespace ddl::optim
