// The shared state behind a Variable handle. Internal to autograd/.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <ddl/autograd/node.h>
#include <ddl/autograd/variable.h>

namespace ddl {

struct VariableImpl {
  Tensor data;
  Tensor grad;
  bool requires_grad = false;
  std::shared_ptr<autograd::Node> grad_fn;  // null for leaves
  std::map<int, Variable::Hook> post_accumulate_hooks;
  // A leaf's register_hook hooks (a non-leaf's live on its grad_fn: Node::add_pre_hook).
  std::map<int, Variable::GradHook> grad_hooks;
  int next_hook_id = 0;
  // Set when this variable is a view of another one's values (made by a view op): the root of
  // the views, whose history an in-place write through this one updates (Note [In-place on views]).
  std::shared_ptr<VariableImpl> view_base;
  // On a base: counts the recorded in-place writes into it or its views. On a view: the base's
  // count when the view's grad_fn was set; when they differ, the view's history is stale and is
  // rebuilt before use (Note [Views after an in-place write]).
  uint64_t history_epoch = 0;
  bool view_made_without_grad = false;  // a view taken under NoGradGuard
  std::string name;
};

namespace autograd::detail {
// `out`, marked as a view of `in` when its values share in's storage (a view op's result);
// returned unchanged otherwise. See Note [In-place on views] in autograd/ops/inplace.cpp.
Variable as_view(Variable out, const Variable& in);
// Rebuilds a stale view's grad_fn from its base's current history (inplace.cpp).
void regenerate_view(const std::shared_ptr<VariableImpl>& view);
inline void refresh_view(const std::shared_ptr<VariableImpl>& v) {
  if (v->view_base && v->view_base->history_epoch != v->history_epoch) [[unlikely]]
    regenerate_view(v);
}
}  // namespace autograd::detail

}  // namespace ddl
