// ReduceLROnPlateau's bookkeeping, step for step as PyTorch 1.13's.
#include <algorithm>
#include <cmath>
#include <limits>

#include <ddl/optim/plateau.h>

namespace ddl::optim {

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& opt, PlateauOptions o)
    : opt_(opt),
      o_(o),
      best_(o.maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()) {
  DDL_CHECK(o.factor > 0 && o.factor < 1, "ReduceLROnPlateau: factor must be in (0, 1), got ", o.factor);
  DDL_CHECK(o.patience >= 0 && o.cooldown >= 0 && o.threshold >= 0 && o.min_lr >= 0,
            "ReduceLROnPlateau: patience, cooldown, threshold and min_lr must be >= 0");
}

bool ReduceLROnPlateau::better(double a) const {
  if (o_.relative_threshold) return o_.maximize ? a > best_ * (1 + o_.threshold) : a < best_ * (1 - o_.threshold);
  return o_.maximize ? a > best_ + o_.threshold : a < best_ - o_.threshold;
}

void ReduceLROnPlateau::step(double metric) {
  ++steps_;
  if (better(metric)) {
    best_ = metric;
    bad_ = 0;
  } else {
    ++bad_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    bad_ = 0;  // bad steps during a cooldown do not count
  }
  if (bad_ > o_.patience) {
    for (auto& g : opt_.param_groups()) {
      const double old_lr = g.lr(), new_lr = std::max(old_lr * o_.factor, o_.min_lr);
      if (old_lr - new_lr > o_.eps) g.set_lr(new_lr);
    }
    cooldown_left_ = o_.cooldown;
    bad_ = 0;
  }
}

std::map<std::string, double> ReduceLROnPlateau::state() const {
  return {{"best", best_},
          {"num_bad_steps", static_cast<double>(bad_)},
          {"cooldown_left", static_cast<double>(cooldown_left_)},
          {"steps", static_cast<double>(steps_)}};
}

void ReduceLROnPlateau::load_state(const std::map<std::string, double>& s) {
  for (const char* key : {"best", "num_bad_steps", "cooldown_left", "steps"})
    DDL_CHECK(s.count(key), "ReduceLROnPlateau::load_state: the state lacks '", key, "'");
  const auto count = [&](const char* key) {
    const double v = s.at(key);
    DDL_CHECK(v >= 0 && v == std::floor(v) && v < 9e15, "ReduceLROnPlateau::load_state: '", key,
              "' must be a non-negative integer, got ", v);
    return static_cast<int64_t>(v);
  };
  best_ = s.at("best");
  bad_ = count("num_bad_steps");
  cooldown_left_ = count("cooldown_left");
  steps_ = count("steps");
}

}  // namespace ddl::optim
