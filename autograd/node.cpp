// Nodes and make_result, the one place where ops record themselves in the graph.
#include "autograd/node.h"

#include <atomic>

#include "autograd/grad_mode.h"
#include "autograd/variable_impl.h"

namespace ddl::autograd {
namespace {
std::atomic<uint64_t> next_sequence_nr{0};
}

Node::Node(std::string name, std::vector<Edge> next, std::vector<Shape> input_shapes, BackwardFn fn)
    : name_(std::move(name)),
      next_(std::move(next)),
      input_shapes_(std::move(input_shapes)),
      fn_(std::move(fn)),
      seq_(next_sequence_nr++),
      scope_(trace::enabled() ? current_scope() : nullptr) {}

std::vector<Tensor> Node::apply(const Tensor& grad_out) {
  DDL_CHECK(!released_, name_,
            ": trying to backward through the graph a second time; its saved tensors were freed. "
            "Pass retain_graph=true to the first backward() if you need to");
  std::vector<bool> needs(next_.size());
  for (size_t i = 0; i < next_.size(); ++i) needs[i] = next_[i].valid();
  std::vector<Tensor> grads = fn_(grad_out, needs);
  DDL_ASSERT(grads.size() == next_.size(), name_, " returned ", grads.size(), " gradients for ", next_.size(),
             " inputs");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!needs[i] || !grads[i].defined()) continue;
    DDL_ASSERT(grads[i].shape() == input_shapes_[i], name_, ": gradient ", i, " has shape ", grads[i].shape(),
               " but the input had ", input_shapes_[i]);
  }
  return grads;
}

void Node::release() {
  fn_ = nullptr;
  released_ = true;
}

Variable make_result(Tensor out, const char* name, const std::vector<const Variable*>& inputs, BackwardFn backward) {
  bool any = false;
  if (is_grad_enabled())
    for (const Variable* v : inputs) any = any || (v->defined() && v->requires_grad());
  if (!any) return Variable(std::move(out));
  std::vector<Edge> edges;
  std::vector<Shape> shapes;
  for (const Variable* v : inputs) {
    Edge e;
    if (v->defined() && v->requires_grad()) {
      if (v->grad_fn())
        e.node = v->grad_fn();
      else
        e.leaf = v->impl_ptr();
    }
    edges.push_back(std::move(e));
    shapes.push_back(v->defined() ? v->shape() : Shape{});
  }
  auto impl = std::make_shared<VariableImpl>();
  impl->data = std::move(out);
  impl->requires_grad = true;
  impl->grad_fn = std::make_shared<Node>(name, std::move(edges), std::move(shapes), std::move(backward));
  return Variable(std::move(impl));
}

Variable make_result(Tensor out, const char* name, std::initializer_list<const Variable*> inputs, BackwardFn backward) {
  return make_result(std::move(out), name, std::vector<const Variable*>(inputs), std::move(backward));
}

}  // namespace ddl::autograd
