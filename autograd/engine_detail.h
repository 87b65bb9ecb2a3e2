// Internal to autograd/: the pieces engine.cpp (backward) and grad.cpp (grad) share.
// Gradients are Tensors in an ordinary pass and Variables under create_graph.
#pragma once

#include <string>
#include <vector>

#include <ddl/autograd/anomaly.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl::autograd::detail {

// Gradients are Tensors in an ordinary pass and Variables under create_graph; these
// overloads let one engine loop (grad.cpp's) serve both.
inline const Tensor& tensor_of(const Tensor& t) { return t; }
inline const Tensor& tensor_of(const Variable& v) { return v.data(); }
inline bool is_defined(const Tensor& t) { return t.defined(); }
inline bool is_defined(const Variable& v) { return v.defined(); }
inline std::vector<Tensor> run_node(Node* n, const Tensor& g, const std::vector<bool>& needs) {
  return n->apply(g, needs);
}
inline std::vector<Variable> run_node(Node* n, const Variable& g, const std::vector<bool>& needs) {
  return n->apply_differentiable(g, needs);
}

template <typename G>
void add_into(G& buffer, G g) {
  if (!is_defined(buffer))
    buffer = std::move(g);
  else
    buffer = add(buffer, g);  // under create_graph a recorded, differentiable sum
}

// Runs a node; with anomaly detection on, checks what it returns and names its creation site.
template <typename G>
std::vector<G> apply_node(Node* n, const G& g, const std::vector<bool>& needs) {
  if (!is_anomaly_enabled()) [[likely]]
    return run_node(n, g, needs);
  std::vector<G> grads;
  try {
    grads = run_node(n, g, needs);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "\nanomaly detection: the error was raised by the backward of " +
                describe_creation_site(n->name(), n->creation_site()));
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!needs[i] || !is_defined(grads[i]) || all_finite(tensor_of(grads[i]))) continue;
    DDL_CHECK(
        false, "anomaly detection: ", n->name(), " returned NaN or Inf in the gradient for its input ", i, " (shape ",
        tensor_of(grads[i]).shape(), "; its incoming gradient ",
        all_finite(tensor_of(g)) ? "was finite" : "already held NaN or Inf: check the gradient passed to backward",
        "). The ", describe_creation_site(n->name(), n->creation_site()));
  }
  return grads;
}

// Among ready nodes, the most recently created runs first (Note [Backward order]).
struct ReadyOrder {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

}  // namespace ddl::autograd::detail
