// OneCycleLR's phases, as PyTorch 1.13 lays them out (phase ends are float step numbers).
#include <cmath>

#include <ddl/optim/one_cycle.h>

namespace ddl::optim {

OneCycleLR::OneCycleLR(Optimizer& opt, double max_lr, int64_t total_steps, OneCycleOptions o)
    : LRScheduler(opt), total_(total_steps), opts_(o) {
  DDL_CHECK(total_steps >= 1, "OneCycleLR: total_steps must be >= 1, got ", total_steps);
  DDL_CHECK(o.pct_start >= 0 && o.pct_start <= 1, "OneCycleLR: pct_start must be in [0, 1], got ", o.pct_start);
  DDL_CHECK(max_lr > 0 && o.div_factor > 0 && o.final_div_factor > 0,
            "OneCycleLR: max_lr, div_factor and final_div_factor must be positive");
  const double initial = max_lr / o.div_factor, min_lr = initial / o.final_div_factor;
  const double total = static_cast<double>(total_steps), up = o.pct_start * total - 1;
  const double lo = o.base_momentum, hi = o.max_momentum;
  if (o.three_phase)
    phases_ = {{up, initial, max_lr, hi, lo},
               {2 * o.pct_start * total - 2, max_lr, initial, lo, hi},
               {total - 1, initial, min_lr, hi, hi}};
  else
    phases_ = {{up, initial, max_lr, hi, lo}, {total - 1, max_lr, min_lr, lo, hi}};
  double start = 0;
  for (const Phase& p : phases_) {
    DDL_CHECK(p.end_step > start, "OneCycleLR: a phase of the cycle would be empty (total_steps ", total_steps,
              ", pct_start ", o.pct_start, "): need pct_start * total_steps > 1 and pct_start < 1");
    start = p.end_step;
  }
  if (o.cycle_momentum) {
    const auto& opts = opt.param_groups().empty() ? std::map<std::string, double>{} : opt.param_groups()[0].options;
    momentum_key_ = opts.count("momentum") ? "momentum" : opts.count("beta1") ? "beta1" : nullptr;
    DDL_CHECK(momentum_key_, "OneCycleLR: cycle_momentum needs an optimizer with momentum (SGD) or betas (Adam); ",
              "pass cycle_momentum = false for this one");
  }
  set_step(0);
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (opts_.cos_anneal) return end + (start - end) / 2.0 * (std::cos(M_PI * pct) + 1);
  return (end - start) * pct + start;
}

std::pair<const OneCycleLR::Phase*, double> OneCycleLR::locate(int64_t k) const {
  DDL_CHECK(k <= total_, "OneCycleLR: tried to step ", k, " times; the cycle has total_steps ", total_);
  double start = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& p = phases_[i];
    if (static_cast<double>(k) <= p.end_step || i + 1 == phases_.size())
      return {&p, (static_cast<double>(k) - start) / (p.end_step - start)};
    start = p.end_step;
  }
  return {&phases_.back(), 1.0};
}

double OneCycleLR::lr_at(double, int64_t k) const {
  const auto [p, pct] = locate(k);
  return anneal(p->start_lr, p->end_lr, pct);
}

double OneCycleLR::momentum_at(int64_t k) const {
  const auto [p, pct] = locate(k);
  return anneal(p->start_momentum, p->end_momentum, pct);
}

void OneCycleLR::apply_extra(int64_t k) {
  if (!momentum_key_) return;
  const double m = momentum_at(k);
  for (auto& g : optimizer().param_groups()) g.options[momentum_key_] = m;
}

}  // namespace ddl::optim
