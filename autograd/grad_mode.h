// Grad mode: while off (inside a NoGradGuard), ops record nothing.
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

}  // namespace ddl
