// Gradient hooks (Variable::register_hook, retain_grad), the backward() method and the
// Tensor-indexed operator[]. A leaf keeps its hooks itself; a non-leaf's hooks live on the
// node that produced it, which runs them on its output gradient (Node::run_pre_hooks), so
// the engine needs no map from nodes back to variables.
#include <ddl/autograd/engine.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/variable_impl.h>
#include <ddl/tensor/ops/indexing.h>

namespace ddl {

int Variable::add_grad_hook(GradHook hook) {
  DDL_CHECK(impl_ != nullptr, "register_hook: the variable is undefined");
  DDL_CHECK(requires_grad(), "register_hook: cannot register a hook on a variable that doesn't require gradient");
  const int id = impl_->next_hook_id++;
  if (impl_->grad_fn)
    impl_->grad_fn->add_pre_hook(id, std::move(hook));
  else
    impl_->grad_hooks.emplace(id, std::move(hook));
  return id;
}

void Variable::remove_hook(int id) {
  DDL_CHECK(impl_ != nullptr, "remove_hook: the variable is undefined");
  impl_->post_accumulate_hooks.erase(id);
  impl_->grad_hooks.erase(id);
  if (impl_->grad_fn) impl_->grad_fn->remove_pre_hook(id);
}

void Variable::retain_grad() const {
  DDL_CHECK(impl_ != nullptr, "retain_grad: the variable is undefined");
  DDL_CHECK(requires_grad(), "retain_grad: can't retain_grad on a variable that doesn't require grad");
  if (impl_->grad_fn) impl_->grad_fn->set_retained(impl_);
}

bool Variable::retains_grad() const { return impl_ && impl_->grad_fn && impl_->grad_fn->retains(impl_.get()); }

void Variable::backward(const Tensor& grad, std::optional<bool> retain_graph, bool create_graph) const {
  DDL_CHECK(!create_graph,
            "backward: create_graph=true is not supported here (a ddl .grad is a Tensor and cannot carry a graph); "
            "use autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true), which returns the gradients as "
            "Variables that can be differentiated again");
  autograd::backward({*this}, {grad}, retain_graph.value_or(create_graph));
}

Variable Variable::operator[](const Tensor& index) const { return this->index({index}); }

namespace autograd {

void Node::remove_pre_hook(int id) {
  std::erase_if(pre_hooks_, [id](const auto& h) { return h.first == id; });
}

Tensor Node::run_pre_hooks(Tensor grad) const {
  for (const auto& [id, hook] : pre_hooks_) {
    Tensor replaced = hook(grad);
    if (!replaced.defined()) continue;
    DDL_CHECK(replaced.shape() == grad.shape(), "register_hook: the hook on the output of ", name_,
              " returned a gradient of shape ", replaced.shape(), " for one of shape ", grad.shape());
    grad = std::move(replaced);
  }
  if (const std::shared_ptr<VariableImpl> v = retained_.lock()) {
    // The gradient may be an engine buffer that is accumulated into later: keep a copy.
    if (!v->grad.defined())
      v->grad = grad.to(v->data.dtype()).clone();
    else
      v->grad.add_(grad);
  }
  return grad;
}

}  // namespace autograd

}  // namespace ddl
