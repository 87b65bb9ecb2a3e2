// The backward engine: runs the recorded graph in reverse topological order.
#pragma once

#include <functional>
#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl::autograd {

// Backpropagates from each root with its gradient (one-element roots may pass undefined,
// or `grads` may be empty when every root has one element: torch.autograd.backward's
// grad_tensors=None) and accumulates into the .grad of every leaf that requires grad. To get gradients as
// values instead, or gradients with a graph of their own, use grad() (autograd/grad.h).
void backward(const std::vector<Variable>& roots, const std::vector<Tensor>& grads = {}, bool retain_graph = false);

// Runs `fn` once when the backward pass in progress on this thread finishes
// (after every leaf gradient is accumulated). Only valid during backward (e.g. from a hook).
void queue_callback(std::function<void()> fn);

// Runs `fn` at the end of every backward pass until removed. Returns an id. grad() calls
// do not run these callbacks: they accumulate nothing into .grad.
int add_backward_end_callback(std::function<void()> fn);
void remove_backward_end_callback(int id);

}  // namespace ddl::autograd
