// Node: one recorded operation in the backward graph. It holds a closure that
// maps the gradient of its output to gradients of its inputs, and one Edge per
// input pointing where each input gradient goes (the producing Node, or the
// leaf Variable that accumulates it). make_result is the public, stable way to
// record an op, built-in or user-written (docs/autograd.md, "Custom functions"). A node
// refuses to run on inputs or an output changed in place since it was recorded
// (Note [Saved tensor versions] in node.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ddl/autograd/scope.h>
#include <ddl/autograd/variable.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::autograd {

class Node;
struct CreationSite;

struct Edge {
  std::shared_ptr<Node> node;          // set when the input came from another op
  std::shared_ptr<VariableImpl> leaf;  // set when the input is a leaf that requires grad
  bool valid() const { return node || leaf; }
};

// A tensor's storage and its in-place write count when an op recorded it, and for an input
// its Variable (a differentiable backward may capture that instead of the data). Weak, so
// that an input the op did not save is still freed as soon as nothing else needs it.
struct SavedVersion {
  std::weak_ptr<Storage> storage;
  std::weak_ptr<VariableImpl> variable;
  uint64_t version = 0;
};

// grad_out: gradient w.r.t. the node's output. needs[i]: whether input i wants a
// gradient. Returns one Tensor per input, left undefined where not needed.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_out, const std::vector<bool>& needs)>;
// The same map written with Variable ops, so that its result is differentiable again:
// the engine calls it (with grad mode on) only under create_graph. See Note [Double backward].
using DiffBackwardFn = std::function<std::vector<Variable>(const Variable& grad_out, const std::vector<bool>& needs)>;

class Node {
 public:
  // input_dtypes[i]: input i's dtype; its gradient is cast to it (Note [Gradient dtype]).
  Node(std::string name, std::vector<Edge> next, std::vector<Shape> input_shapes, std::vector<DType> input_dtypes,
       BackwardFn fn, DiffBackwardFn diff_fn = nullptr);

  const std::string& name() const { return name_; }
  const std::vector<Edge>& next_edges() const { return next_; }
  // Creation order: later nodes run first when several are ready.
  uint64_t sequence_nr() const { return seq_; }
  // Calls the closure, checks each returned gradient against its input's shape and
  // casts it to its input's dtype. needs[i] defaults to whether edge i is valid.
  std::vector<Tensor> apply(const Tensor& grad_out);
  std::vector<Tensor> apply(const Tensor& grad_out, const std::vector<bool>& needs);
  // The create_graph form: the differentiable closure when there is one; otherwise the
  // Tensor closure, its results wrapped so that differentiating them again raises
  // "double backward through <op> is not supported".
  std::vector<Variable> apply_differentiable(const Variable& grad_out, const std::vector<bool>& needs);
  void set_differentiable_backward(DiffBackwardFn fn) { diff_fn_ = std::move(fn); }
  // Frees the closures and what they saved; a second backward through it then fails clearly.
  void release();
  // The module scope it was created in, while tracing (else nullptr). See Note [Module scopes].
  const ScopeLabel* scope() const { return scope_; }
  // Where it was made, recorded only while anomaly detection is on (else nullptr).
  const CreationSite* creation_site() const { return site_.get(); }
  // A user's op (custom_function.h): a wrong gradient shape is the user's error, named so.
  void set_user_defined() { user_defined_ = true; }
  // Records the version of each input's and of the output's storage (make_result does);
  // apply() then throws if its closure holds one of them and it was written in place since.
  void record_versions(const std::vector<const Variable*>& inputs, const Tensor& output);

  // The register_hook hooks of the Variable this node produced, run by backward() on the
  // gradient of the node's output before the node runs; then, when retain_grad() asked for it,
  // that gradient is accumulated into the Variable's grad.
  void add_pre_hook(int id, Variable::GradHook hook) { pre_hooks_.emplace_back(id, std::move(hook)); }
  void remove_pre_hook(int id);
  void set_retained(const std::shared_ptr<VariableImpl>& v) { retained_ = v; }
  bool retains(const VariableImpl* v) const { return !retained_.expired() && retained_.lock().get() == v; }
  Tensor run_pre_hooks(Tensor grad) const;

 private:
  template <typename G>
  void validate_gradients(std::vector<G>& grads, const std::vector<bool>& needs) const;
  // differentiable: the closure about to run is diff_fn_ (create_graph), else fn_.
  void check_versions(bool differentiable) const;
  bool closure_holds(const SavedVersion& saved, const std::shared_ptr<Storage>& storage, bool differentiable) const;

  std::string name_;
  std::vector<Edge> next_;
  std::vector<Shape> input_shapes_;
  std::vector<DType> input_dtypes_;
  BackwardFn fn_;
  DiffBackwardFn diff_fn_;
  uint64_t seq_;
  const ScopeLabel* scope_;
  std::shared_ptr<const CreationSite> site_;
  std::vector<SavedVersion> versions_;  // inputs in order, then the output
  bool released_ = false;
  bool user_defined_ = false;
  std::vector<std::pair<int, Variable::GradHook>> pre_hooks_;
  std::weak_ptr<VariableImpl> retained_;
};

// Wraps an op's result. When grad mode is on and some input requires grad, the
// result gets a Node named `name` that runs `backward`; otherwise it is a plain
// constant and both closures are dropped unused. `diff_backward`, when given, is
// the same gradient written with Variable ops (double backward, Note [Double backward]).
Variable make_result(Tensor out, const char* name, std::initializer_list<const Variable*> inputs, BackwardFn backward,
                     DiffBackwardFn diff_backward = nullptr);
Variable make_result(Tensor out, const char* name, const std::vector<const Variable*>& inputs, BackwardFn backward,
                     DiffBackwardFn diff_backward = nullptr);
// Gives `result`'s node (just made by make_result) its differentiable backward, for ops
// whose make_result call sits in a shared helper. A constant result is returned unchanged.
Variable with_double_backward(Variable result, DiffBackwardFn diff_backward);

// Throws PyTorch's error for a saved tensor written in place since it was saved; `what`
// names the op and the tensor ("MulBackward, input 1 of shape [3]").
[[noreturn]] void throw_modified_in_place(const std::string& what, uint64_t version, uint64_t expected);

}  // namespace ddl::autograd
