// Variable handle methods (the differentiable views live in ops/view.cpp).
#include <ddl/autograd/engine.h>
#include <ddl/autograd/variable.h>
#include <ddl/autograd/variable_impl.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl {

Variable::Variable(Tensor data, bool requires_grad) : impl_(std::make_shared<VariableImpl>()) {
  DDL_CHECK(data.defined(), "Variable: cannot wrap an undefined tensor");
  impl_->data = std::move(data);
  requires_grad_(requires_grad);
}

namespace {
VariableImpl& checked(const std::shared_ptr<VariableImpl>& impl, const char* what) {
  DDL_CHECK(impl != nullptr, what, ": the variable is undefined");
  return *impl;
}
}  // namespace

const Tensor& Variable::data() const { return checked(impl_, "data").data; }

void Variable::set_data(Tensor data) {
  DDL_CHECK(data.defined(), "set_data: undefined tensor");
  checked(impl_, "set_data").data = std::move(data);
}

// These three read a view's history, so they first rebuild it when stale (Note [Views after an
// in-place write] in ops/inplace.cpp).
bool Variable::requires_grad() const {
  if (!impl_) return false;
  autograd::detail::refresh_view(impl_);
  return impl_->requires_grad;
}

Variable& Variable::requires_grad_(bool requires_grad) {
  VariableImpl& v = checked(impl_, "requires_grad_");
  DDL_CHECK(is_leaf() || requires_grad, "requires_grad_: only leaves can stop requiring grad; use detach()");
  DDL_CHECK(!requires_grad || is_floating(v.data.dtype()),
            "requires_grad_: only float tensors can require gradients, got ", describe(v.data));
  v.requires_grad = requires_grad;
  return *this;
}

bool Variable::is_leaf() const {
  if (!impl_) return true;
  autograd::detail::refresh_view(impl_);
  return !impl_->grad_fn;
}
const Tensor& Variable::grad() const { return checked(impl_, "grad").grad; }

void Variable::set_grad(Tensor grad) {
  VariableImpl& v = checked(impl_, "set_grad");
  DDL_CHECK(!grad.defined() || grad.shape() == v.data.shape(), "set_grad: gradient ", describe(grad),
            " does not match variable ", describe(v.data));
  v.grad = std::move(grad);
}

void Variable::zero_grad(bool set_to_none) {
  VariableImpl& v = checked(impl_, "zero_grad");
  if (set_to_none || !v.grad.defined())
    v.grad = Tensor();
  else
    v.grad.zero_();
}

const std::shared_ptr<autograd::Node>& Variable::grad_fn() const {
  checked(impl_, "grad_fn");
  autograd::detail::refresh_view(impl_);
  return impl_->grad_fn;
}

Variable Variable::detach() const { return Variable(data(), false); }

const std::string& Variable::name() const { return checked(impl_, "name").name; }
Variable& Variable::set_name(std::string name) {
  checked(impl_, "set_name").name = std::move(name);
  return *this;
}

int Variable::register_post_accumulate_grad_hook(Hook hook) {
  VariableImpl& v = checked(impl_, "register_post_accumulate_grad_hook");
  DDL_CHECK(is_leaf() && v.requires_grad,
            "register_post_accumulate_grad_hook: only leaves that require grad accumulate gradients");
  const int id = v.next_hook_id++;
  v.post_accumulate_hooks.emplace(id, std::move(hook));
  return id;
}

std::ostream& operator<<(std::ostream& os, const Variable& v) {
  if (!v.defined()) return os << "Variable(undefined)";
  os << v.data();
  if (v.grad_fn())
    os << " grad_fn=" << v.grad_fn()->name();
  else if (v.requires_grad())
    os << " requires_grad=true";
  return os;
}

}  // namespace ddl
