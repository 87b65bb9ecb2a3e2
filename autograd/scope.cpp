// Note [Module scopes]: per-module backward spans without hooks on every module. While
// tracing, nn::call_child() opens a scope for each child module's forward; every Node made
// inside it records the innermost scope. The engine runs nodes in reverse creation order,
// so one module's nodes run back to back: it opens a span when the scope of the node it is
// about to run changes and closes it at the next change. Two levels are kept — the top-level
// block ("features") and the innermost module ("features.3") — so the top-level blocks always
// get one span each and leaf layers nest inside them. Gradient-ready hooks (DDP) fire while a
// node's gradient is accumulated, so they fall inside the span of the module that owns it.
#include <map>
#include <mutex>
#include <string>

#include <ddl/autograd/scope.h>

namespace ddl::autograd {
namespace detail {
thread_local const ScopeLabel* t_scope = nullptr;
}

const ScopeLabel* scope_label(std::string_view name, std::string_view top) {
  static std::mutex mu;
  static auto* labels = new std::map<std::pair<std::string, std::string>, ScopeLabel>;  // never freed: see header
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = labels->try_emplace({std::string(name), std::string(top)});
  if (fresh) {
    ScopeLabel& l = it->second;
    l.name = trace::intern(name);
    l.top = trace::intern(top);
    l.backward_name = trace::intern(std::string(name) + " (backward)");
    l.backward_top = trace::intern(std::string(top) + " (backward)");
  }
  return &it->second;
}

}  // namespace ddl::autograd
