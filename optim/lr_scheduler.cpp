// Closed-form learning-rate schedules.
#include <algorithm>
#include <cmath>

#include <ddl/optim/lr_scheduler.h>

namespace ddl::optim {

LRScheduler::LRScheduler(Optimizer& opt) : opt_(opt) {
  for (const auto& g : opt.param_groups()) base_lrs_.push_back(g.lr());
}

void LRScheduler::step() { set_step(step_ + 1); }

void LRScheduler::set_step(int64_t k) {
  DDL_CHECK(k >= 0, "LRScheduler: step must be >= 0, got ", k);
  step_ = k;
  apply();
}

std::vector<double> LRScheduler::get_lr() const {
  std::vector<double> out;
  for (double b : base_lrs_) out.push_back(lr_at(b, step_));
  return out;
}

void LRScheduler::apply() {
  auto& groups = opt_.param_groups();
  for (size_t i = 0; i < groups.size() && i < base_lrs_.size(); ++i) groups[i].set_lr(lr_at(base_lrs_[i], step_));
  apply_extra(step_);
}

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma)
    : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {
  DDL_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  set_step(0);
}
double StepLR::lr_at(double base, int64_t k) const {
  return base * std::pow(gamma_, static_cast<double>(k / step_size_));
}

MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(opt), milestones_(std::move(milestones)), gamma_(gamma) {
  DDL_CHECK(std::is_sorted(milestones_.begin(), milestones_.end()), "MultiStepLR: milestones must be increasing");
  set_step(0);
}
double MultiStepLR::lr_at(double base, int64_t k) const {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), k) - milestones_.begin();
  return base * std::pow(gamma_, static_cast<double>(passed));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min)
    : LRScheduler(opt), t_max_(t_max), eta_min_(eta_min) {
  DDL_CHECK(t_max > 0, "CosineAnnealingLR: T_max must be positive, got ", t_max);
  set_step(0);
}
double CosineAnnealingLR::lr_at(double base, int64_t k) const {
  const double t = static_cast<double>(std::min(k, t_max_));
  return eta_min_ + (base - eta_min_) * (1 + std::cos(M_PI * t / static_cast<double>(t_max_))) / 2;
}

WarmupLR::WarmupLR(Optimizer& opt, int64_t warmup_steps, double start_factor, std::shared_ptr<LRScheduler> after)
    : LRScheduler(opt), warmup_(warmup_steps), start_factor_(start_factor), after_(std::move(after)) {
  DDL_CHECK(warmup_steps >= 0 && start_factor > 0 && start_factor <= 1,
            "WarmupLR: need warmup_steps >= 0 and start_factor in (0, 1]");
  set_step(0);
}
double WarmupLR::lr_at(double base, int64_t k) const {
  if (k < warmup_) {
    const double f = start_factor_ + (1 - start_factor_) * static_cast<double>(k) / static_cast<double>(warmup_);
    return base * f;
  }
  if (!after_) return base;
  return after_->lr_at(base, k - warmup_);
}

}  // namespace ddl::optim
