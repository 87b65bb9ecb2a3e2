// autograd::grad: gradients of outputs w.r.t. chosen inputs, returned as values, like
// torch.autograd.grad. It leaves every .grad untouched and runs no hooks. With
// create_graph the gradients carry a graph of their own and can be differentiated
// again (see Note [Double backward] in autograd/node.cpp and docs/autograd.md).
#pragma once

#include <optional>
#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl::autograd {

// outputs: the roots, each requiring grad. inputs: leaves or intermediate Variables that
// require grad. grad_outputs: one per output (same shape), or empty / an undefined entry
// for a one-element output (taken as 1). retain_graph defaults to create_graph.
// Returns one gradient per input, d(sum_k <outputs[k], grad_outputs[k]>)/d(input).
// Throws a ddl::Error naming the input if it is not reachable from the outputs, unless
// allow_unused (then its entry is undefined). A reachable input that receives no gradient
// gets zeros.
std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Variable>& grad_outputs = {},
                           std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                           bool allow_unused = false);

}  // namespace ddl::autograd
