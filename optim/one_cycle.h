// OneCycleLR: the 1cycle policy (Smith & Topin, "Super-Convergence", 2018) as
// torch.optim.lr_scheduler.OneCycleLR: the rate rises from max_lr / div_factor to
// max_lr over pct_start of the steps, then falls to that start / final_div_factor;
// momentum (SGD's momentum or Adam's beta1) moves the opposite way. Stepped once per
// batch; closed form in the step count, so resuming at step k gives the same values.
#pragma once

#include <ddl/optim/lr_scheduler.h>

namespace ddl::optim {

struct OneCycleOptions {
  double pct_start = 0.3;
  bool cos_anneal = true;  // false: linear ('linear' anneal_strategy)
  bool cycle_momentum = true;
  double base_momentum = 0.85, max_momentum = 0.95;
  double div_factor = 25, final_div_factor = 1e4;
  bool three_phase = false;
};

class OneCycleLR : public LRScheduler {
 public:
  // Requires total_steps >= 1 and pct_start in [0, 1]; with cycle_momentum, an optimizer
  // with a "momentum" or "beta1" option.
  OneCycleLR(Optimizer& opt, double max_lr, int64_t total_steps, OneCycleOptions opts = {});
  double lr_at(double base, int64_t k) const override;  // base is unused: the cycle sets the rates
  double momentum_at(int64_t k) const;

 protected:
  void apply_extra(int64_t k) override;

 private:
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  double anneal(double start, double end, double pct) const;
  // The phase holding step k and the fraction of it done.
  std::pair<const Phase*, double> locate(int64_t k) const;

  int64_t total_;
  OneCycleOptions opts_;
  std::vector<Phase> phases_;
  const char* momentum_key_ = nullptr;  // "momentum" or "beta1"
};

}  // namespace ddl::optim
