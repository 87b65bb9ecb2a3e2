// Learning-rate schedules, stepped once per epoch (or per iteration, as you
// choose), as torch.optim.lr_scheduler; constructing one sets the step-0 rate. Each computes the rate in closed form
// from the step count, so resuming at step k gives the same rates.
#pragma once

#include <memory>
#include <vector>

#include <ddl/optim/optimizer.h>

namespace ddl::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& opt);
  virtual ~LRScheduler() = default;
  // Advances one step and writes the new rate into every group.
  void step();
  // Jumps to step k (for resuming).
  void set_step(int64_t k);
  int64_t last_step() const { return step_; }
  std::vector<double> get_lr() const;
  // The rate of a group whose initial rate is base_lr, at step k.
  virtual double lr_at(double base_lr, int64_t k) const = 0;

 protected:
  // Called after the rates of step k are written, for schedules that set more than
  // the rate (OneCycleLR's momentum).
  virtual void apply_extra(int64_t k) {}
  Optimizer& optimizer() { return opt_; }

 private:
  void apply();
  Optimizer& opt_;
  std::vector<double> base_lrs_;
  int64_t step_ = 0;
};

// lr * gamma^(k / step_size)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1);

 public:
  double lr_at(double base, int64_t k) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr * gamma^(number of milestones <= k)
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1);

 public:
  double lr_at(double base, int64_t k) const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// eta_min + (lr - eta_min) (1 + cos(pi k / T_max)) / 2
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min = 0);

 public:
  double lr_at(double base, int64_t k) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// Linear warm-up from start_factor * lr to lr over `warmup_steps`, then the
// wrapped schedule (if any) counted from the end of the warm-up.
class WarmupLR : public LRScheduler {
 public:
  WarmupLR(Optimizer& opt, int64_t warmup_steps, double start_factor = 0.1,
           std::shared_ptr<LRScheduler> after = nullptr);

 public:
  double lr_at(double base, int64_t k) const override;

 private:
  int64_t warmup_;
  double start_factor_;
  std::shared_ptr<LRScheduler> after_;
};

}  // namespace ddl::optim
