// Module scopes for the timeline: nn names the module whose forward is running (a scope),
// each Node remembers the scope it was created in, and the engine groups the nodes it runs
// by scope into backward spans. Used only while trace::enabled(); otherwise inert.
// See Note [Module scopes] in autograd/scope.cpp.
#pragma once

#include <cstdint>
#include <string_view>

#include <ddl/trace/trace.h>

namespace ddl::autograd {

// Interned, never freed: safe to keep in Nodes past their module's life.
struct ScopeLabel {
  const char* name = nullptr;           // dotted module path, e.g. "features.3"
  const char* top = nullptr;            // its top-level block, e.g. "features"
  const char* backward_name = nullptr;  // "features.3 (backward)"
  const char* backward_top = nullptr;   // "features (backward)"
};

// The label for `name` under `top` (the same pointer for the same strings). Takes a lock:
// modules cache theirs.
const ScopeLabel* scope_label(std::string_view name, std::string_view top);

namespace detail {
extern thread_local const ScopeLabel* t_scope;
}
// The innermost module scope open on this thread (nullptr outside any).
inline const ScopeLabel* current_scope() { return detail::t_scope; }

// Opens `label` as the current scope and records a "forward" span for it until destroyed.
class ScopeGuard {
 public:
  explicit ScopeGuard(const ScopeLabel* label) : label_(label), previous_(detail::t_scope), t0_(trace::now_ns()) {
    detail::t_scope = label;
  }
  ~ScopeGuard() {
    detail::t_scope = previous_;
    trace::complete(label_->name, "forward", t0_, trace::now_ns());
  }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  const ScopeLabel* label_;
  const ScopeLabel* previous_;
  int64_t t0_;
};

}  // namespace ddl::autograd
