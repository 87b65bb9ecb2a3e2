// Grad mode: while off (inside a NoGradGuard), ops record nothing. GradModeGuard sets
// it either way for a scope (the engine turns it on while building a double-backward graph).
#pragma once

namespace ddl {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Disables graph recording for its scope (per thread), like torch.no_grad().
class NoGradGuard {
 public:
  NoGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Sets grad mode to `enabled` for its scope (per thread), like torch.set_grad_enabled(bool)
// used as a context manager; torch.enable_grad() is GradModeGuard(true).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : prev_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ddl
