// The backward engine.
// Note [Backward order]: a node runs once every consumer of its output has
// delivered its gradient (dependency counts from one graph walk). Among ready
// nodes the most recently created runs first, the order PyTorch uses, so
// parameters near the loss finish first; DDP's bucket order relies on it.
// Leaves are counted like nodes: a leaf's gradient is accumulated, and its
// post-accumulate hooks fire, once, after all its incoming gradients are summed.
#include "autograd/engine.h"

#include <algorithm>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/anomaly.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops/elementwise.h"
#include "autograd/variable_impl.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"

namespace ddl::autograd {
namespace {

thread_local std::vector<std::function<void()>>* queued_callbacks = nullptr;
std::mutex end_callbacks_mu;
std::map<int, std::function<void()>> end_callbacks;
int next_end_callback = 0;

// Gradients are Tensors in an ordinary pass and Variables under create_graph; these
// overloads let one engine loop (run_grad) serve both.
const Tensor& tensor_of(const Tensor& t) { return t; }
const Tensor& tensor_of(const Variable& v) { return v.data(); }
bool is_defined(const Tensor& t) { return t.defined(); }
bool is_defined(const Variable& v) { return v.defined(); }
std::vector<Tensor> run_node(Node* n, const Tensor& g, const std::vector<bool>& needs) { return n->apply(g, needs); }
std::vector<Variable> run_node(Node* n, const Variable& g, const std::vector<bool>& needs) {
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
    DDL_CHECK(false, "anomaly detection: ", n->name(), " returned NaN or Inf in the gradient for its input ", i,
              " (shape ", tensor_of(grads[i]).shape(), "; its incoming gradient was finite). The ",
              describe_creation_site(n->name(), n->creation_site()));
  }
  return grads;
}

void accumulate_leaf(const std::shared_ptr<VariableImpl>& leaf_ptr, Tensor g) {
  VariableImpl& leaf = *leaf_ptr;
  // Steal g when nobody else holds its storage; otherwise copy so that later
  // in-place accumulation cannot write into another tensor.
  if (!leaf.grad.defined()) {
    const bool owned = g.storage().use_count() == 1 && g.is_contiguous() && g.dtype() == leaf.data.dtype();
    leaf.grad = owned ? std::move(g) : g.to(leaf.data.dtype()).clone();
  } else {
    leaf.grad.add_(g);
  }
  if (leaf.post_accumulate_hooks.empty()) return;
  Variable handle(leaf_ptr);
  for (auto& [id, hook] : leaf.post_accumulate_hooks) hook(handle);
}

// Backward spans per module scope: the top-level block and the innermost module, each open
// while consecutive nodes belong to it. See Note [Module scopes] in autograd/scope.cpp.
class ScopeSpans {
 public:
  void enter(const ScopeLabel* s) {
    if (s == inner_ || !trace::enabled()) [[likely]]
      return;
    const int64_t now = trace::now_ns();
    const char* top = s ? s->backward_top : nullptr;
    if (inner_ && inner_->name != inner_->top) trace::complete(inner_->backward_name, "backward", inner_t0_, now);
    if (top_ && top_ != top) trace::complete(top_, "backward", top_t0_, now);
    if (top != top_) top_t0_ = now;
    top_ = top;
    inner_ = s;
    inner_t0_ = now;
  }
  ~ScopeSpans() { enter(nullptr); }

 private:
  const ScopeLabel* inner_ = nullptr;
  const char* top_ = nullptr;
  int64_t inner_t0_ = 0, top_t0_ = 0;
};

struct ReadyOrder {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

}  // namespace

void backward(const std::vector<Variable>& roots, const std::vector<Tensor>& grads_in, bool retain_graph) {
  DDL_CHECK(roots.size() == grads_in.size(), "backward: ", roots.size(), " roots but ", grads_in.size(), " gradients");
  DDL_CHECK(queued_callbacks == nullptr, "backward: called re-entrantly from a hook");
  DDL_TRACE_SPAN("autograd backward", "backward");

  std::unordered_map<Node*, int> deps;
  std::unordered_map<VariableImpl*, int> leaf_deps;
  std::unordered_map<Node*, Tensor> node_grads;
  std::unordered_map<VariableImpl*, Tensor> leaf_grads;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep_alive;

  // One walk over the graph counts, for every node and leaf, its incoming edges.
  std::vector<Node*> stack;
  auto visit = [&](const std::shared_ptr<Node>& n) {
    if (keep_alive.emplace(n.get(), n).second) stack.push_back(n.get());
  };
  for (const Variable& r : roots) {
    DDL_CHECK(r.defined(), "backward: undefined root");
    DDL_CHECK(r.requires_grad(),
              "backward: the variable does not require grad and has no grad_fn; "
              "did you forget requires_grad_() on a parameter, or call it under NoGradGuard?");
    if (r.grad_fn()) visit(r.grad_fn());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges()) {
      if (e.node) {
        ++deps[e.node.get()];
        visit(e.node);
      } else if (e.leaf) {
        ++leaf_deps[e.leaf.get()];
      }
    }
  }

  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  std::vector<std::shared_ptr<VariableImpl>> root_leaves;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Variable& r = roots[i];
    Tensor g = grads_in[i];
    if (!g.defined()) {
      DDL_CHECK(r.numel() == 1, "backward: grad can be implicitly created only for a one-element output, got shape ",
                r.shape(), "; pass a gradient tensor");
      g = ones_like(r.data());
    }
    DDL_CHECK(g.shape() == r.shape(), "backward: gradient ", describe(g), " does not match output ",
              describe(r.data()));
    if (r.grad_fn()) {
      add_into(node_grads[r.grad_fn().get()], g);
    } else {
      root_leaves.push_back(r.impl_ptr());
      add_into(leaf_grads[r.impl()], g);
    }
  }
  for (const Variable& r : roots)
    if (r.grad_fn() && deps[r.grad_fn().get()] == 0) {
      deps[r.grad_fn().get()] = -1;  // queued once even if it is several roots' grad_fn
      ready.push(r.grad_fn().get());
    }

  std::vector<std::function<void()>> callbacks;
  queued_callbacks = &callbacks;
  struct Reset {
    ~Reset() { queued_callbacks = nullptr; }
  } reset;

  for (auto& leaf : root_leaves)
    if (leaf_deps[leaf.get()] == 0 && leaf_grads.count(leaf.get())) {
      accumulate_leaf(leaf, std::move(leaf_grads[leaf.get()]));
      leaf_grads.erase(leaf.get());
    }

  ScopeSpans spans;
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    spans.enter(n->scope());
    const auto& edges = n->next_edges();
    // A node that received no gradient still releases its inputs' dependency counts.
    std::vector<Tensor> grads(edges.size());
    if (auto it = node_grads.find(n); it != node_grads.end()) {
      Tensor g = std::move(it->second);
      node_grads.erase(it);
      std::vector<bool> needs(edges.size());
      for (size_t i = 0; i < edges.size(); ++i) needs[i] = edges[i].valid();
      grads = apply_node(n, g, needs);
    }
    if (!retain_graph) n->release();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (e.node) {
        if (grads[i].defined()) add_into(node_grads[e.node.get()], std::move(grads[i]));
        if (--deps[e.node.get()] == 0) ready.push(e.node.get());
      } else if (e.leaf) {
        VariableImpl* leaf = e.leaf.get();
        if (grads[i].defined()) add_into(leaf_grads[leaf], std::move(grads[i]));
        if (--leaf_deps[leaf] == 0) {
          if (auto it = leaf_grads.find(leaf); it != leaf_grads.end()) {
            Tensor g = std::move(it->second);
            leaf_grads.erase(it);
            accumulate_leaf(e.leaf, std::move(g));
          }
        }
      }
    }
  }

  spans.enter(nullptr);
  for (auto& cb : callbacks) cb();
  std::vector<std::function<void()>> persistent;
  {
    std::lock_guard<std::mutex> lock(end_callbacks_mu);
    for (auto& [id, cb] : end_callbacks) persistent.push_back(cb);
  }
  for (auto& cb : persistent) cb();
}

namespace {

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

namespace detail {
std::vector<Variable> run_grad(const std::vector<Variable>& roots, const std::vector<Variable>& seeds,
                               const std::vector<Variable>& inputs, bool retain_graph, bool create_graph,
                               bool allow_unused) {
  if (create_graph) {
    GradModeGuard grad_on(true);  // the sums of gradients are recorded too
    return run_grad_impl<Variable>(roots, seeds, inputs, retain_graph, allow_unused);
  }
  std::vector<Tensor> plain;
  for (const Variable& s : seeds) plain.push_back(s.data());
  return run_grad_impl<Tensor>(roots, std::move(plain), inputs, retain_graph, allow_unused);
}
}  // namespace detail

void queue_callback(std::function<void()> fn) {
  DDL_CHECK(queued_callbacks != nullptr, "queue_callback: only valid while a backward pass runs (e.g. from a hook)");
  queued_callbacks->push_back(std::move(fn));
}

int add_backward_end_callback(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(end_callbacks_mu);
  end_callbacks.emplace(next_end_callback, std::move(fn));
  return next_end_callback++;
}

void remove_backward_end_callback(int id) {
  std::lock_guard<std::mutex> lock(end_callbacks_mu);
  end_callbacks.erase(id);
}

}  // namespace ddl::autograd
