// Node: one recorded operation in the backward graph. It holds a closure that
// maps the gradient of its output to gradients of its inputs, and one Edge per
// input pointing where each input gradient goes (the producing Node, or the
// leaf Variable that accumulates it).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "autograd/scope.h"
#include "autograd/variable.h"
#include "tensor/tensor.h"

namespace ddl::autograd {

class Node;

struct Edge {
  std::shared_ptr<Node> node;          // set when the input came from another op
  std::shared_ptr<VariableImpl> leaf;  // set when the input is a leaf that requires grad
  bool valid() const { return node || leaf; }
};

// grad_out: gradient w.r.t. the node's output. needs[i]: whether input i wants a
// gradient. Returns one Tensor per input, left undefined where not needed.
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_out, const std::vector<bool>& needs)>;

class Node {
 public:
  Node(std::string name, std::vector<Edge> next, std::vector<Shape> input_shapes, BackwardFn fn);

  const std::string& name() const { return name_; }
  const std::vector<Edge>& next_edges() const { return next_; }
  // Creation order: later nodes run first when several are ready.
  uint64_t sequence_nr() const { return seq_; }
  // Calls the closure and checks each returned gradient against its input's shape.
  std::vector<Tensor> apply(const Tensor& grad_out);
  // Frees the closure and what it saved; a second backward through it then fails clearly.
  void release();
  // The module scope it was created in, while tracing (else nullptr). See Note [Module scopes].
  const ScopeLabel* scope() const { return scope_; }

 private:
  std::string name_;
  std::vector<Edge> next_;
  std::vector<Shape> input_shapes_;
  BackwardFn fn_;
  uint64_t seq_;
  const ScopeLabel* scope_;
  bool released_ = false;
};

// Wraps an op's result. When grad mode is on and some input requires grad, the
// result gets a Node named `name` that runs `backward`; otherwise it is a plain
// constant and `backward` is dropped unused.
Variable make_result(Tensor out, const char* name, std::initializer_list<const Variable*> inputs, BackwardFn backward);
Variable make_result(Tensor out, const char* name, const std::vector<const Variable*>& inputs, BackwardFn backward);

}  // namespace ddl::autograd
