// CustomFunction: a user's differentiable op from two Tensor functions, like
// torch.autograd.Function: forward computes output tensors from input tensors and may
// save tensors for backward; backward maps output gradients to input gradients. The op is
// recorded with make_result (node.h), and a wrong gradient from the user's backward is
// reported against the op's name. It has no double backward of its own: under
// create_graph its gradients raise if differentiated again (see docs/autograd.md for
// make_result with a DiffBackwardFn, which has).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl::autograd {

// What forward leaves for backward (torch's ctx). One per call of the op.
class FunctionCtx {
 public:
  // Tensors backward will need (inputs, outputs or intermediates); kept until the graph is freed.
  // Backward throws if one was written in place after forward returned (as PyTorch's ctx).
  void save_for_backward(std::vector<Tensor> tensors) { saved_ = std::move(tensors); }
  const std::vector<Tensor>& saved_tensors() const { return saved_; }
  // Outputs that carry no gradient (indices, masks): returned as constants, never recorded.
  void mark_non_differentiable(std::vector<size_t> outputs) { non_differentiable_ = std::move(outputs); }
  bool is_non_differentiable(size_t output) const;
  // Whether input i wants a gradient (in forward: requires grad; in backward: is needed by
  // this backward pass). backward may return an undefined Tensor where it is false.
  bool needs_input_grad(size_t i) const { return i < needs_.size() && needs_[i]; }

 private:
  friend struct CustomFunction;
  std::vector<Tensor> saved_;
  std::vector<uint64_t> saved_versions_;  // saved_[i].version() when forward returned
  std::vector<size_t> non_differentiable_;
  std::vector<bool> needs_;
};

struct CustomFunction {
  using Forward = std::function<std::vector<Tensor>(FunctionCtx& ctx, const std::vector<Tensor>& inputs)>;
  // grad_outputs: one per output, zeros for an output that got no gradient. Returns one
  // gradient per input, of the input's shape, undefined where !ctx.needs_input_grad(i).
  using Backward = std::function<std::vector<Tensor>(FunctionCtx& ctx, const std::vector<Tensor>& grad_outputs)>;

  std::string name;  // names the op in the graph and in error messages
  Forward forward;   // runs with grad mode off
  Backward backward;

  // Runs forward on the inputs' values and records the op when grad mode is on and an
  // input requires grad. Each differentiable output gets its own node; see Note [Custom
  // functions with several outputs] in custom_function.cpp.
  std::vector<Variable> apply(const std::vector<Variable>& inputs) const;
};

}  // namespace ddl::autograd
