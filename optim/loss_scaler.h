// Dynamic loss scaling for float16 training, as torch.cuda.amp.GradScaler:
// scale(loss) multiplies the loss so small float16 gradients do not flush to
// zero; step(opt) unscales the gradients and skips the update when any is
// inf/NaN; update() halves the scale after such a step and doubles it after
// growth_interval clean steps in a row. bfloat16 has float32's range and
// needs no scaler. One scaler may serve several optimizers; it does not
// all-reduce found_inf across ranks (under DDP the gradients already agree).
#pragma once

#include <map>
#include <string>

#include <ddl/optim/optimizer.h>

namespace ddl::optim {

struct LossScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;  // when false every call passes through (scale 1, no checks)
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions opts = {});

  // loss * scale(), recorded in the graph.
  Variable scale(const Variable& loss) const;
  // Divides the gradients of opt's parameters by scale() in place and notes
  // whether any is inf or NaN, waiting for the device once (per device the
  // gradients are on). At most once per optimizer between update()s.
  void unscale_(Optimizer& opt);
  // Unscales (unless unscale_ ran) and calls opt.step() when every gradient is
  // finite; returns whether it stepped.
  bool step(Optimizer& opt);
  // Adjusts the scale after the iteration's step()s (see the header comment).
  void update();

  double get_scale() const { return enabled_ ? scale_ : 1.0; }
  int64_t growth_tracker() const { return growth_tracker_; }
  // scale, growth_factor, backoff_factor, growth_interval, growth_tracker (GradScaler.state_dict's keys).
  std::map<std::string, double> state() const;
  void load_state(const std::map<std::string, double>& state);

 private:
  struct PerOptimizer {
    bool unscaled = false;
    bool found_inf = false;
  };
  PerOptimizer& of(const Optimizer& opt) { return per_optimizer_[&opt]; }

  double scale_, growth_factor_, backoff_factor_;
  int64_t growth_interval_, growth_tracker_ = 0;
  bool enabled_;
  // Keyed by address only between one unscale_/step and the next update(), as GradScaler's per-optimizer state.
  std::map<const Optimizer*, PerOptimizer> per_optimizer_;
};

}  // namespace ddl::optim
