// Anomaly detection for backward, like torch.autograd.detect_anomaly: while on, every Node
// records where it was created (op, module scope, a short backtrace) and the engine checks
// each gradient a node returns for NaN/Inf, raising a ddl::Error that names the op, its
// creation site and the input whose gradient went bad. Off by default; DDL_DETECT_ANOMALY=1
// in the environment turns it on at start-up. When off it costs one branch per node.
// It does not check forward values.
#pragma once

#include <atomic>
#include <memory>
#include <string>

namespace ddl {
class Tensor;
}

namespace ddl::autograd {

namespace detail {
extern std::atomic<bool> anomaly_enabled;
}

inline bool is_anomaly_enabled() { return detail::anomaly_enabled.load(std::memory_order_relaxed); }
// Process-wide (as in PyTorch), so nodes made on any thread record their site.
void set_detect_anomaly(bool enabled);

// Turns anomaly detection on (or off) for its scope, restoring the previous setting.
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool enabled = true);
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

// Where a node was made: the module scope open at the time (while tracing, see
// Note [Module scopes]) and the raw return addresses of the creating call stack.
struct CreationSite;
std::shared_ptr<const CreationSite> capture_creation_site();
// "op 'LogBackward' created in module 'features.3' at:\n  #0 ...", symbolised on demand.
std::string describe_creation_site(const std::string& op, const CreationSite* site);
// True when every element of `g` is finite (NaN and Inf are not); any device.
bool all_finite(const Tensor& g);

}  // namespace ddl::autograd
