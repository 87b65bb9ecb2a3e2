// The shared state behind a Variable handle. Internal to autograd/.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "autograd/node.h"
#include "autograd/variable.h"

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
  std::string name;
};

namespace autograd::detail {
// `out`, marked as a view of `in` when its values share in's storage (a view op's result);
// returned unchanged otherwise. See Note [In-place on views] in autograd/ops/inplace.cpp.
Variable as_view(Variable out, const Variable& in);
}  // namespace autograd::detail

}  // namespace ddl
