// Variable: a Tensor plus the autograd state that makes it differentiable
// (requires_grad, grad, the Node that produced it, hooks). Copies share that
// state, like torch.Tensor handles. See autograd/README.md for why this is a
// wrapper and not a field of Tensor.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

namespace autograd {
class Node;
}
struct VariableImpl;

class Variable {
 public:
  using Hook = std::function<void(Variable&)>;
  // A gradient hook (register_hook): sees the gradient, may return a replacement (undefined: keep it).
  using GradHook = std::function<Tensor(const Tensor&)>;

  Variable() = default;
  // A leaf holding `data`; implicit so tensors pass where variables are expected.
  Variable(Tensor data, bool requires_grad = false);  // NOLINT
  explicit Variable(std::shared_ptr<VariableImpl> impl) : impl_(std::move(impl)) {}
  Variable(const Variable&) = default;
  Variable(Variable&&) noexcept = default;
  // As Tensor's: a named variable rebinds, a temporary view is written into (recorded, like
  // copy_ and fill_ below), so `v[0][1] = 5` and `v[1] = row` work as in LibTorch.
  Variable& operator=(const Variable&) & = default;
  Variable& operator=(Variable&&) & noexcept = default;
  const Variable& operator=(const Variable& src) && { return copy_(src); }
  const Variable& operator=(double value) && { return fill_(value); }

  bool defined() const { return impl_ != nullptr; }
  // The values. Writing through them (optimizer steps) bypasses autograd.
  const Tensor& data() const;
  // Replaces the values (same shape not required); keeps the autograd state.
  void set_data(Tensor data);

  const Shape& shape() const { return data().shape(); }
  const Shape& sizes() const { return data().shape(); }  // LibTorch's name for shape()
  // dtype, device and requires_grad: `autograd::zeros(s, v.options())` makes a like-minded leaf.
  TensorOptions options() const { return data().options().requires_grad(requires_grad()); }
  int64_t size(int64_t d) const { return data().size(d); }
  int64_t dim() const { return data().dim(); }
  int64_t numel() const { return data().numel(); }
  DType dtype() const { return data().dtype(); }
  Device device() const { return data().device(); }
  double item() const { return data().item(); }
  template <typename T>
  T item() const {
    return data().item<T>();
  }

  bool requires_grad() const;
  // Only leaves may change it; a leaf that requires grad gets .grad from backward.
  Variable& requires_grad_(bool requires_grad = true);
  bool is_leaf() const;
  // The accumulated gradient; undefined until a backward pass reaches this leaf.
  const Tensor& grad() const;
  void set_grad(Tensor grad);
  // Drops the gradient (set_to_none, PyTorch's default) or zeroes it in place.
  void zero_grad(bool set_to_none = true);
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  // The same values, cut from the graph.
  Variable detach() const;
  const std::string& name() const;
  Variable& set_name(std::string name);

  // Backpropagates from this variable. Without `grad` it must hold one element.
  // The graph is freed afterwards unless retain_graph is set (default: create_graph).
  // create_graph=true throws: .grad is a Tensor here, so it cannot carry a graph; use
  // autograd::grad(..., create_graph=true), which returns Variables (docs/autograd.md).
  void backward(const Tensor& grad = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;

  // Runs `hook(*this)` right after backward accumulates into this leaf's grad.
  // Returns an id for remove_hook.
  int register_post_accumulate_grad_hook(Hook hook);
  // Runs `hook(grad)` on the gradient of this variable during backward() (leaf or not), before
  // it is accumulated or passed on; a hook returning a Tensor replaces the gradient, as
  // LibTorch's register_hook. Hooks run in registration order; autograd::grad runs none.
  template <typename F>
  int register_hook(F hook) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, const Tensor&>>)
      return add_grad_hook([hook](const Tensor& g) mutable -> Tensor {
        hook(g);
        return Tensor();
      });
    else
      return add_grad_hook(GradHook(std::move(hook)));
  }
  void remove_hook(int id);
  // Keeps this non-leaf's gradient in grad() after backward (accumulating, after its hooks
  // ran); a no-op on a leaf, which keeps its gradient anyway.
  void retain_grad() const;
  bool retains_grad() const;

  // ---- in place, recorded in the graph (autograd/ops/inplace.cpp) ----
  // As PyTorch: refused on a leaf that requires grad (and on its views) while grad mode is on;
  // under NoGradGuard they only write the values. A tensor an op saved for backward and then
  // written here makes that backward throw (Note [Saved tensor versions] in node.cpp). On a view
  // of another Variable the base's history is updated too (Note [In-place on views]), and views
  // of the base taken earlier get it when next used (Note [Views after an in-place write]).
  const Variable& add_(const Variable& other, double alpha = 1.0) const;
  const Variable& sub_(const Variable& other, double alpha = 1.0) const;
  const Variable& mul_(const Variable& other) const;
  const Variable& div_(const Variable& other) const;
  const Variable& add_(double value) const;
  const Variable& sub_(double value) const;
  const Variable& mul_(double value) const;
  const Variable& div_(double value) const;
  const Variable& fill_(double value) const;
  const Variable& zero_() const { return fill_(0.0); }
  const Variable& clamp_(std::optional<double> min, std::optional<double> max) const;
  const Variable& copy_(const Variable& src) const;

  // ---- differentiable views (autograd/ops/view.cpp) ----
  Variable view(const Shape& shape) const;
  Variable reshape(const Shape& shape) const;
  Variable flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Variable permute(const std::vector<int64_t>& dims) const;
  Variable transpose(int64_t d0, int64_t d1) const;
  Variable t() const;
  Variable narrow(int64_t dim, int64_t start, int64_t length) const;
  Variable slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Variable select(int64_t dim, int64_t index) const;
  Variable expand(const Shape& shape) const;
  Variable squeeze() const;  // drops every size-1 dim
  Variable squeeze(int64_t dim) const;
  Variable unsqueeze(int64_t dim) const;
  Variable contiguous() const;
  // Casts and copies between devices are recorded: the gradient comes back in this
  // variable's dtype and on its device. The same variable when nothing changes.
  Variable to(DType dtype) const;
  Variable to(Device device) const;
  // x.index({Slice(), 0, idx}): basic and advanced indexing (autograd/ops/indexing.h).
  Variable index(const std::vector<TensorIndex>& indices) const;
  // v[i] = select(0, i) and v[idx] = index({idx}), differentiable, as Tensor's operator[].
  Variable operator[](int64_t i) const { return select(0, i); }
  Variable operator[](const Tensor& index) const;

  // ---- method forms of the free ops, as in LibTorch (autograd/variable_methods.cpp) ----
  Variable sum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Variable mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  // One dim, as LibTorch's x.sum(1) (a template, so that x.sum({}) still means every dim).
  template <std::integral I>
  Variable sum(I dim, bool keepdim = false) const {
    return sum(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
  }
  template <std::integral I>
  Variable mean(I dim, bool keepdim = false) const {
    return mean(std::vector<int64_t>{static_cast<int64_t>(dim)}, keepdim);
  }
  Variable max() const;  // the largest element, 0-dim; ties share the gradient
  Variable min() const;
  ValuesIndices<Variable> max(int64_t dim, bool keepdim = false) const;  // (values, argmax) along dim
  ValuesIndices<Variable> min(int64_t dim, bool keepdim = false) const;
  Variable abs() const;
  Variable neg() const;
  Variable exp() const;
  Variable log() const;
  Variable sqrt() const;
  Variable pow(double exponent) const;
  Variable relu() const;
  Variable sigmoid() const;
  Variable tanh() const;
  Variable clamp(std::optional<double> min, std::optional<double> max) const;
  Variable matmul(const Variable& other) const;
  Variable softmax(int64_t dim) const;
  Variable log_softmax(int64_t dim) const;
  Variable cumsum(int64_t dim) const;
  ValuesIndices<Variable> sort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  ValuesIndices<Variable> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  // Non-differentiable results are plain tensors: indices (int64) and comparisons (bool).
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  Tensor argmax() const;  // index into the flattened values
  Tensor argmax(int64_t dim, bool keepdim = false) const;
  Tensor argmin() const;
  Tensor argmin(int64_t dim, bool keepdim = false) const;
  Tensor eq(const Variable& other) const;
  Tensor ne(const Variable& other) const;
  Tensor lt(const Variable& other) const;
  Tensor le(const Variable& other) const;
  Tensor gt(const Variable& other) const;
  Tensor ge(const Variable& other) const;
  Tensor eq(double other) const;
  Tensor ne(double other) const;
  Tensor lt(double other) const;
  Tensor le(double other) const;
  Tensor gt(double other) const;
  Tensor ge(double other) const;

  VariableImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<VariableImpl>& impl_ptr() const { return impl_; }

 private:
  int add_grad_hook(GradHook hook);
  std::shared_ptr<VariableImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Variable& v);

}  // namespace ddl
