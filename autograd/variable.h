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
#include <vector>

#include <ddl/tensor/tensor.h>

namespace ddl {

namespace autograd {
class Node;
}
struct VariableImpl;

class Variable {
 public:
  using Hook = std::function<void(Variable&)>;

  Variable() = default;
  // A leaf holding `data`; implicit so tensors pass where variables are expected.
  Variable(Tensor data, bool requires_grad = false);  // NOLINT
  explicit Variable(std::shared_ptr<VariableImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  // The values. Writing through them (optimizer steps) bypasses autograd.
  const Tensor& data() const;
  // Replaces the values (same shape not required); keeps the autograd state.
  void set_data(Tensor data);

  const Shape& shape() const { return data().shape(); }
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
  // The graph is freed afterwards unless retain_graph is set.
  void backward(const Tensor& grad = {}, bool retain_graph = false) const;

  // Runs `hook(*this)` right after backward accumulates into this leaf's grad.
  // Returns an id for remove_hook.
  int register_post_accumulate_grad_hook(Hook hook);
  void remove_hook(int id);

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
  std::shared_ptr<VariableImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Variable& v);

}  // namespace ddl
