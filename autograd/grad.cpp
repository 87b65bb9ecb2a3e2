// autograd::grad: argument checks, then its own engine loop over the nodes it needs,
// for Tensor gradients or, under create_graph, Variable ones (helpers in engine_detail.h).
#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include <ddl/autograd/engine_detail.h>
#include <ddl/autograd/grad.h>
#include <ddl/autograd/grad_mode.h>
#include <ddl/autograd/variable_impl.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::autograd {
namespace {

using detail::add_into;
using detail::apply_node;
using detail::is_defined;
using detail::ReadyOrder;

// Note [grad() runs only what it needs]: grad() returns gradients for `inputs` only, so
// it marks the nodes on some path from a root to an input (edges always point to older
// nodes, so one pass in creation order decides it), counts dependencies among those alone,
// and asks each node only for the input gradients that lead somewhere needed. Nothing is
// accumulated into .grad and no hooks or end-of-backward callbacks run.
template <typename G>
std::vector<Variable> run_grad_impl(const std::vector<Variable>& roots, std::vector<G> seeds,
                                    const std::vector<Variable>& inputs, bool retain_graph, bool allow_unused) {
  DDL_TRACE_SPAN("autograd grad", "backward");
  std::unordered_map<Node*, std::shared_ptr<Node>> keep_alive;
  std::unordered_set<VariableImpl*> leaves_seen;
  std::vector<Node*> nodes, stack;
  auto visit = [&](const std::shared_ptr<Node>& n) {
    if (keep_alive.emplace(n.get(), n).second) stack.push_back(n.get()), nodes.push_back(n.get());
  };
  for (const Variable& r : roots) {
    if (r.grad_fn())
      visit(r.grad_fn());
    else
      leaves_seen.insert(r.impl());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (e.node) visit(e.node);
      if (e.leaf) leaves_seen.insert(e.leaf.get());
    }
  }

  std::unordered_set<Node*> target_nodes;
  std::unordered_set<VariableImpl*> target_leaves;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Variable& x = inputs[i];
    const bool reachable = x.grad_fn() ? keep_alive.count(x.grad_fn().get()) > 0 : leaves_seen.count(x.impl()) > 0;
    DDL_CHECK(reachable || allow_unused, "grad: input ", i, x.name().empty() ? "" : " '" + x.name() + "'", " of shape ",
              x.shape(),
              " is not reachable from the outputs (it was not used to compute them, or only through detached or "
              "no-grad computations); pass allow_unused=true to get an undefined gradient for it");
    if (x.grad_fn())
      target_nodes.insert(x.grad_fn().get());
    else
      target_leaves.insert(x.impl());
  }

  std::sort(nodes.begin(), nodes.end(), [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); });
  std::unordered_set<Node*> needed;
  auto edge_needed = [&](const Edge& e) {
    return e.node ? needed.count(e.node.get()) > 0 : e.leaf && target_leaves.count(e.leaf.get()) > 0;
  };
  for (Node* n : nodes) {
    bool need = target_nodes.count(n) > 0;
    for (const Edge& e : n->next_edges()) need = need || edge_needed(e);
    if (need) needed.insert(n);
  }
  std::unordered_map<Node*, int> deps;
  for (Node* n : needed)
    for (const Edge& e : n->next_edges())
      if (e.node && needed.count(e.node.get())) ++deps[e.node.get()];

  std::unordered_map<Node*, G> node_grads, captured;
  std::unordered_map<VariableImpl*, G> leaf_grads;
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* n = roots[i].grad_fn().get();
    if (n && needed.count(n))
      add_into(node_grads[n], std::move(seeds[i]));
    else if (!n && target_leaves.count(roots[i].impl()))
      add_into(leaf_grads[roots[i].impl()], std::move(seeds[i]));
  }
  for (const Variable& r : roots) {
    Node* n = r.grad_fn().get();
    if (n && needed.count(n) && deps[n] == 0) {
      deps[n] = -1;  // queued once even if it is several roots' grad_fn
      ready.push(n);
    }
  }

  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    const auto& edges = n->next_edges();
    G g;
    if (auto it = node_grads.find(n); it != node_grads.end()) {
      g = std::move(it->second);
      node_grads.erase(it);
    }
    if (target_nodes.count(n) && is_defined(g)) captured[n] = g;
    std::vector<bool> needs(edges.size());
    bool any = false;
    for (size_t i = 0; i < edges.size(); ++i) any |= needs[i] = edge_needed(edges[i]);
    if (!any) continue;
    std::vector<G> grads(edges.size());
    if (is_defined(g)) {
      grads = apply_node(n, g, needs);
      if (!retain_graph) n->release();
    }
    for (size_t i = 0; i < edges.size(); ++i) {
      if (!needs[i]) continue;
      const Edge& e = edges[i];
      if (e.node) {
        if (is_defined(grads[i])) add_into(node_grads[e.node.get()], std::move(grads[i]));
        if (--deps[e.node.get()] == 0) ready.push(e.node.get());
      } else if (is_defined(grads[i])) {
        add_into(leaf_grads[e.leaf.get()], std::move(grads[i]));
      }
    }
  }

  std::vector<Variable> out(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Variable& x = inputs[i];
    const bool reachable = x.grad_fn() ? keep_alive.count(x.grad_fn().get()) > 0 : leaves_seen.count(x.impl()) > 0;
    G g;
    if (x.grad_fn()) {
      if (auto it = captured.find(x.grad_fn().get()); it != captured.end()) g = it->second;
    } else if (auto it = leaf_grads.find(x.impl()); it != leaf_grads.end()) {
      g = it->second;
    }
    if (is_defined(g))
      out[i] = Variable(g);
    else if (reachable)  // reached, but every path carried no gradient: a true zero
      out[i] = Variable(zeros_like(x.data()));
  }
  return out;
}

}  // namespace

std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Variable>& grad_outputs, std::optional<bool> retain_graph,
                           bool create_graph, bool allow_unused) {
  DDL_CHECK(!outputs.empty(), "grad: no outputs given");
  DDL_CHECK(!inputs.empty(), "grad: no inputs given");
  DDL_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad: ", outputs.size(), " outputs but ",
            grad_outputs.size(), " grad_outputs");
  std::vector<Variable> seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Variable& y = outputs[k];
    DDL_CHECK(y.defined(), "grad: output ", k, " is undefined");
    DDL_CHECK(y.requires_grad(), "grad: output ", k, " of shape ", y.shape(),
              " does not require grad and has no grad_fn; was it computed under NoGradGuard or from detached "
              "values only?");
    Variable s = grad_outputs.empty() ? Variable() : grad_outputs[k];
    if (!s.defined()) {
      DDL_CHECK(y.numel() == 1,
                "grad: grad_outputs can be implicitly created only for a one-element output; "
                "output ",
                k, " has shape ", y.shape());
      s = Variable(ones_like(y.data()));
    }
    DDL_CHECK(s.shape() == y.shape(), "grad: grad_outputs[", k, "] has shape ", s.shape(), " but output ", k,
              " has shape ", y.shape());
    if (s.dtype() != y.dtype()) s = s.to(y.dtype());  // as backward(): Note [Gradient dtype]
    seeds.push_back(std::move(s));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    DDL_CHECK(inputs[i].defined(), "grad: input ", i, " is undefined");
    DDL_CHECK(inputs[i].requires_grad(), "grad: input ", i,
              inputs[i].name().empty() ? "" : " '" + inputs[i].name() + "'", " of shape ", inputs[i].shape(),
              " does not require grad; call requires_grad_() on it before computing the outputs");
  }
  const bool retain = retain_graph.value_or(create_graph);
  if (create_graph) {
    GradModeGuard grad_on(true);  // the sums of gradients are recorded too
    return run_grad_impl<Variable>(outputs, seeds, inputs, retain, allow_unused);
  }
  std::vector<Tensor> plain;
  for (const Variable& s : seeds) plain.push_back(s.data());
  return run_grad_impl<Tensor>(outputs, std::move(plain), inputs, retain, allow_unused);
}

}  // namespace ddl::autograd
