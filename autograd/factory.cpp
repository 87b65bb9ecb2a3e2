// ddl::autograd's factories (autograd/factory.h): the tensor factory, then a leaf.
#include <ddl/autograd/factory.h>

namespace ddl::autograd {

namespace {
// The options without requires_grad, for the tensor factory; the flag goes to the leaf.
TensorOptions plain(const TensorOptions& o) { return o.requires_grad(false); }

Variable leaf(Tensor t, const TensorOptions& o, const char* op) {
  DDL_CHECK(!o.requires_grad() || is_floating(t.dtype()), op,
            ": only tensors of floating point dtype can require gradients, got ", t.dtype());
  return Variable(std::move(t), o.requires_grad());
}

TensorOptions like(const Variable& v, const TensorOptions& o, const char* op) {
  DDL_CHECK(v.defined(), op, ": undefined variable");
  return o.merged_with(v.dtype(), v.device());
}
}  // namespace

Variable empty(const Shape& s, TensorOptions o) { return leaf(::ddl::empty(s, plain(o)), o, "empty"); }
Variable zeros(const Shape& s, TensorOptions o) { return leaf(::ddl::zeros(s, plain(o)), o, "zeros"); }
Variable ones(const Shape& s, TensorOptions o) { return leaf(::ddl::ones(s, plain(o)), o, "ones"); }
Variable full(const Shape& s, double value, TensorOptions o) {
  return leaf(::ddl::full(s, value, plain(o)), o, "full");
}
Variable eye(int64_t n, TensorOptions o) { return leaf(::ddl::eye(n, plain(o)), o, "eye"); }
Variable eye(int64_t n, int64_t m, TensorOptions o) { return leaf(::ddl::eye(n, m, plain(o)), o, "eye"); }
Variable arange(double start, double end, double step, TensorOptions o) {
  return leaf(::ddl::arange(start, end, step, plain(o)), o, "arange");
}
Variable arange(int64_t end, TensorOptions o) { return leaf(::ddl::arange(end, plain(o)), o, "arange"); }
Variable linspace(double start, double end, int64_t steps, TensorOptions o) {
  return leaf(::ddl::linspace(start, end, steps, plain(o)), o, "linspace");
}
Variable scalar_tensor(double value, TensorOptions o) {
  return leaf(::ddl::scalar_tensor(value, plain(o)), o, "scalar_tensor");
}
Variable tensor(const ::ddl::detail::TensorData& data, TensorOptions o) {
  return leaf(::ddl::tensor(data, plain(o)), o, "tensor");
}
Variable rand(const Shape& s, TensorOptions o) { return leaf(::ddl::rand(s, plain(o)), o, "rand"); }
Variable randn(const Shape& s, TensorOptions o) { return leaf(::ddl::randn(s, plain(o)), o, "randn"); }

Variable empty_like(const Variable& v, TensorOptions o) {
  return leaf(::ddl::empty(v.shape(), plain(like(v, o, "empty_like"))), o, "empty_like");
}
Variable zeros_like(const Variable& v, TensorOptions o) {
  return leaf(::ddl::zeros(v.shape(), plain(like(v, o, "zeros_like"))), o, "zeros_like");
}
Variable ones_like(const Variable& v, TensorOptions o) {
  return leaf(::ddl::ones(v.shape(), plain(like(v, o, "ones_like"))), o, "ones_like");
}
Variable full_like(const Variable& v, double value, TensorOptions o) {
  return leaf(::ddl::full(v.shape(), value, plain(like(v, o, "full_like"))), o, "full_like");
}
Variable rand_like(const Variable& v, TensorOptions o) {
  return leaf(::ddl::rand(v.shape(), plain(like(v, o, "rand_like"))), o, "rand_like");
}
Variable randn_like(const Variable& v, TensorOptions o) {
  return leaf(::ddl::randn(v.shape(), plain(like(v, o, "randn_like"))), o, "randn_like");
}

}  // namespace ddl::autograd
