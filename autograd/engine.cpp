// The backward engine.
// Note [Backward order]: a node runs once every consumer of its output has
// delivered its gradient (dependency counts from one graph walk). Among ready
// nodes the most recently created runs first, the order PyTorch uses, so
// parameters near the loss finish first; DDP's bucket order relies on it.
// Leaves are counted like nodes: a leaf's gradient is accumulated, and its
// post-accumulate hooks fire, once, after all its incoming gradients are summed.
//
// Note [Reentrant backward]: a backward() may start while another runs on the same thread:
// from a custom function's backward (recomputing a segment and backpropagating through it,
// as activation checkpointing does) or from a hook. As PyTorch's engine allows it, the nested
// pass runs to completion as an independent pass over its own graph, with its own queued
// callbacks; the end-of-backward callbacks (add_backward_end_callback, DDP's) run only when
// the outermost pass ends, since they mean "the step's backward is done".
#include <map>
#include <queue>
#include <unordered_map>

#include <ddl/autograd/engine.h>
#include <ddl/autograd/engine_detail.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/variable_impl.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl::autograd {
namespace {

using detail::add_into;
using detail::apply_node;
using detail::ReadyOrder;

thread_local std::vector<std::function<void()>>* queued_callbacks = nullptr;
std::mutex end_callbacks_mu;
std::map<int, std::function<void()>> end_callbacks;
int next_end_callback = 0;

void accumulate_leaf(const std::shared_ptr<VariableImpl>& leaf_ptr, Tensor g) {
  VariableImpl& leaf = *leaf_ptr;
  for (const auto& [id, hook] : leaf.grad_hooks) {  // register_hook: may replace the gradient
    Tensor replaced = hook(g);
    if (!replaced.defined()) continue;
    DDL_CHECK(replaced.shape() == leaf.data.shape(), "register_hook: a hook returned a gradient of shape ",
              replaced.shape(), " for a leaf of shape ", leaf.data.shape());
    g = std::move(replaced);
  }
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

}  // namespace

void backward(const std::vector<Variable>& roots, const std::vector<Tensor>& grads_in, bool retain_graph) {
  // An empty list means "ones for every root", as torch.autograd.backward's grad_tensors=None;
  // that is only defined for one-element roots (checked below, per root).
  DDL_CHECK(grads_in.empty() || roots.size() == grads_in.size(), "backward: ", roots.size(), " roots but ",
            grads_in.size(), " gradients (pass one per root, or none for one-element roots)");
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
    Tensor g = grads_in.empty() ? Tensor() : grads_in[i];
    if (!g.defined()) {
      DDL_CHECK(r.numel() == 1, "backward: grad can be implicitly created only for a one-element output, got shape ",
                r.shape(), " for root ", i, "; pass a gradient tensor");
      g = ones_like(r.data());
    }
    DDL_CHECK(g.shape() == r.shape(), "backward: gradient ", describe(g), " does not match output ",
              describe(r.data()));
    if (g.dtype() != r.dtype()) g = g.to(r.dtype());  // as a node's gradients: Note [Gradient dtype]
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

  // See Note [Reentrant backward]: a nested pass has its own callbacks and restores the outer's.
  std::vector<std::function<void()>> callbacks;
  std::vector<std::function<void()>>* const outer_callbacks = queued_callbacks;
  const bool outermost = outer_callbacks == nullptr;
  queued_callbacks = &callbacks;
  struct Reset {
    std::vector<std::function<void()>>* outer;
    ~Reset() { queued_callbacks = outer; }
  } reset{outer_callbacks};

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
      Tensor g = n->run_pre_hooks(std::move(it->second));  // register_hook, retain_grad
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
  // A callback may queue another (PyTorch's engine runs those too), and push_back may then
  // reallocate `callbacks`: index, never iterate, and move each out before calling it.
  size_t next = 0;
  auto run_queued = [&] {
    while (next < callbacks.size()) {
      std::function<void()> cb = std::move(callbacks[next++]);
      cb();
    }
  };
  run_queued();
  std::vector<std::function<void()>> persistent;
  if (outermost) {
    std::lock_guard<std::mutex> lock(end_callbacks_mu);
    for (auto& [id, cb] : end_callbacks) persistent.push_back(cb);
  }
  for (auto& cb : persistent) cb();
  run_queued();  // what the persistent callbacks queued
}

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
