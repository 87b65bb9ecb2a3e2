// Anomaly detection: the on/off switch, creation sites and the finiteness check.
// Backtraces are captured with backtrace(3) (a few microseconds, no symbol lookup) and
// symbolised with backtrace_symbols(3) and the C++ demangler only when an error is raised.
#include <cxxabi.h>
#include <execinfo.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <ddl/autograd/anomaly.h>
#include <ddl/autograd/scope.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl::autograd {

namespace detail {
namespace {
bool anomaly_from_env() {
  const char* v = std::getenv("DDL_DETECT_ANOMALY");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}
}  // namespace
std::atomic<bool> anomaly_enabled{anomaly_from_env()};
}  // namespace detail

void set_detect_anomaly(bool enabled) { detail::anomaly_enabled.store(enabled, std::memory_order_relaxed); }

DetectAnomalyGuard::DetectAnomalyGuard(bool enabled) : prev_(is_anomaly_enabled()) { set_detect_anomaly(enabled); }
DetectAnomalyGuard::~DetectAnomalyGuard() { set_detect_anomaly(prev_); }

struct CreationSite {
  const ScopeLabel* scope = nullptr;
  std::array<void*, 24> frames{};
  int depth = 0;
};

std::shared_ptr<const CreationSite> capture_creation_site() {
  auto site = std::make_shared<CreationSite>();
  site->scope = current_scope();
  site->depth = backtrace(site->frames.data(), static_cast<int>(site->frames.size()));
  return site;
}

namespace {
// "binary(_ZN3ddl3logERKNS_8VariableE+0x2c) [0x...]" -> "binary(ddl::log(ddl::Variable const&)+0x2c) [0x...]"
std::string demangle_line(const char* line) {
  std::string s(line);
  const size_t open = s.find('('), plus = s.find('+', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || plus == std::string::npos || plus == open + 1) return s;
  const std::string mangled = s.substr(open + 1, plus - open - 1);
  int status = 0;
  char* name = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || name == nullptr) return s;
  std::string out = s.substr(0, open + 1) + name + s.substr(plus);
  std::free(name);
  return out;
}
}  // namespace

std::string describe_creation_site(const std::string& op, const CreationSite* site) {
  std::ostringstream os;
  os << "op '" << op << "'";
  if (site == nullptr) {
    os << " (created while anomaly detection was off: no creation site recorded)";
    return os.str();
  }
  if (site->scope) os << " created in module '" << site->scope->name << "'";
  os << " was created at (innermost first; addr2line -C -f -e <binary> <offset> resolves bare offsets):";
  char** lines = backtrace_symbols(site->frames.data(), site->depth);
  // Frame 0 is capture_creation_site and frame 1 the Node constructor: skip them.
  for (int i = 2; i < site->depth; ++i) os << "\n  #" << i - 2 << " " << (lines ? demangle_line(lines[i]) : "?");
  std::free(lines);
  return os.str();
}

bool all_finite(const Tensor& g) {
  // x * 0 is 0 for finite x and NaN for NaN or ±Inf, so the sum is NaN exactly when some
  // element is not finite (and never overflows, unlike sum(x)).
  const double s = sum(mul(g, 0.0)).item();
  return s == s;
}

}  // namespace ddl::autograd
