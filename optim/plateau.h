// ReduceLROnPlateau, as torch.optim.lr_scheduler.ReduceLROnPlateau: multiplies every
// group's rate by `factor` once a watched metric (e.g. validation loss) has not improved
// for more than `patience` steps, then waits `cooldown` steps. Unlike the closed-form
// schedules it depends on the metrics seen, so it has state to save for resuming.
#pragma once

#include <map>
#include <string>

#include <ddl/optim/optimizer.h>

namespace ddl::optim {

struct PlateauOptions {
  bool maximize = false;  // mode 'max': a larger metric is better
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  bool relative_threshold = true;  // threshold_mode 'rel' (else 'abs')
  int64_t cooldown = 0;
  double min_lr = 0;
  double eps = 1e-8;  // changes smaller than this are skipped
};

class ReduceLROnPlateau {
 public:
  // Requires 0 < factor < 1, patience >= 0, cooldown >= 0, threshold >= 0.
  explicit ReduceLROnPlateau(Optimizer& opt, PlateauOptions opts = {});
  // Records one value of the metric (NaN counts as no improvement) and lowers the rates when due.
  void step(double metric);
  double best() const { return best_; }
  int64_t num_bad_steps() const { return bad_; }
  // Everything step() depends on, for checkpoints; load_state() restores it.
  std::map<std::string, double> state() const;
  void load_state(const std::map<std::string, double>& state);

 private:
  bool better(double a) const;
  Optimizer& opt_;
  PlateauOptions o_;
  double best_;
  int64_t bad_ = 0, cooldown_left_ = 0, steps_ = 0;
};

}  // namespace ddl::optim
