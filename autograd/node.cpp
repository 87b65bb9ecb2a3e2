// Nodes and make_result, the one place where ops record themselves in the graph.
//
// Note [Double backward]: an op may give make_result two forms of its backward. The
// Tensor form (BackwardFn) is what an ordinary backward() or grad() runs: plain kernels,
// nothing recorded. The Variable form (DiffBackwardFn) computes the same gradients with
// differentiable Variable ops; the engine calls it, with grad mode on, only when asked to
// create_graph, so the gradients it returns carry their own graph and can be
// differentiated again (Hessian-vector products, gradient penalties). The Variable form
// may capture the op's input Variables: they are older than the node, so no cycle forms.
// It must not capture the op's own output Variable (that would be a cycle); ops whose
// derivative uses the output (exp, tanh, softmax) recompute it from the input, which
// costs a forward op only under create_graph. Keeping both forms, instead of running the
// Variable form under no-grad every time, leaves ordinary training exactly as fast as
// before and lets fused kernels (relu_backward, softmax_backward, conv) stay on that path.
// A node with only the Tensor form still runs under create_graph: its gradients are
// wrapped in a node whose own backward raises "double backward through <op> is not
// supported", so a missing formula is an error, never a silent zero.
//
// Note [Gradient dtype]: an op on a 16-bit and a float32 input computes in float32
// (type promotion), so its backward returns float32 gradients, the 16-bit input's
// included; a 16-bit matmul or conv upstream would then get a gradient in the wrong
// dtype. As PyTorch's engine (validate_outputs in torch/csrc/autograd/engine.cpp),
// a node casts each gradient it returns to the dtype its input had, so every backward
// receives its output's dtype. Under create_graph the cast is a recorded Variable::to;
// when the dtypes agree nothing is done, so all-float32 training is unchanged.
//
// Note [Saved tensor versions]: writing in place into a tensor that an op saved for
// backward, between the forward and the backward, makes the backward compute with the
// new values: a silently wrong gradient. As PyTorch does (docs, "Autograd mechanics:
// In-place correctness checks"; c10's VariableVersion), every storage counts the in-place
// writes into it (Storage::version, bumped by copy_, fill_, add_, index_put_, sgd_update_,
// ...) and a node checks, before it runs, that what it saved is still at the version it
// saw. ddl's ops save tensors by capturing them in their backward closure, so make_result
// cannot list what was saved without every op saying so; instead it records each input's
// and the output's storage version (a weak pointer and a number), and only when one has
// changed does the node ask whether its closure holds that storage: it copies the closures
// and sees whether the storage's reference count rises. So an input the op did not save
// (add's) may change freely, as in PyTorch, and the common path costs one compare per
// input. Not covered: a tensor saved that is neither an input nor the output (BatchNorm's
// running statistics in eval mode), writes through raw_data() (PyTorch does not count
// data_ptr() writes either) and collectives writing into a tensor. CustomFunction checks
// the tensors its ctx saved itself (custom_function.cpp).
#include <atomic>

#include <ddl/autograd/anomaly.h>
#include <ddl/autograd/grad_mode.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/variable_impl.h>

namespace ddl::autograd {
namespace {
std::atomic<uint64_t> next_sequence_nr{0};

const Shape& shape_of(const Tensor& t) { return t.shape(); }
const Shape& shape_of(const Variable& v) { return v.shape(); }
DType dtype_of(const Tensor& t) { return t.dtype(); }
DType dtype_of(const Variable& v) { return v.dtype(); }
bool defined(const Tensor& t) { return t.defined(); }
bool defined(const Variable& v) { return v.defined(); }

Edge edge_to(const Variable& v) {
  Edge e;
  if (v.defined() && v.requires_grad()) {
    if (v.grad_fn())
      e.node = v.grad_fn();
    else
      e.leaf = v.impl_ptr();
  }
  return e;
}
}  // namespace

Node::Node(std::string name, std::vector<Edge> next, std::vector<Shape> input_shapes, std::vector<DType> input_dtypes,
           BackwardFn fn, DiffBackwardFn diff_fn)
    : name_(std::move(name)),
      next_(std::move(next)),
      input_shapes_(std::move(input_shapes)),
      input_dtypes_(std::move(input_dtypes)),
      fn_(std::move(fn)),
      diff_fn_(std::move(diff_fn)),
      seq_(next_sequence_nr++),
      scope_(trace::enabled() ? current_scope() : nullptr) {
  if (is_anomaly_enabled()) [[unlikely]]
    site_ = capture_creation_site();
}

void Node::record_versions(const std::vector<const Variable*>& inputs, const Tensor& output) {
  versions_.reserve(inputs.size() + 1);
  for (const Variable* v : inputs) {
    if (v->defined())
      versions_.push_back({v->data().storage(), v->impl_ptr(), v->data().version()});
    else
      versions_.emplace_back();
  }
  if (output.defined()) versions_.push_back({output.storage(), {}, output.version()});
}

bool Node::closure_holds(const SavedVersion& saved, const std::shared_ptr<Storage>& storage,
                         bool differentiable) const {
  // A copy of a closure copies the Tensors and Variables it captured, so their reference
  // counts rise by what it holds. See Note [Saved tensor versions].
  const std::shared_ptr<VariableImpl> variable = saved.variable.lock();
  const long storage_refs = storage.use_count(), variable_refs = variable.use_count();
  bool holds = false;
  if (differentiable && diff_fn_) {
    const DiffBackwardFn copy = diff_fn_;
    holds = storage.use_count() > storage_refs || variable.use_count() > variable_refs;
  } else {
    const BackwardFn copy = fn_;
    holds = storage.use_count() > storage_refs;
  }
  return holds;
}

void Node::check_versions(bool differentiable) const {
  const size_t n_inputs = next_.size();
  for (size_t i = 0; i < versions_.size(); ++i) {
    const std::shared_ptr<Storage> s = versions_[i].storage.lock();
    if (!s || s->version() == versions_[i].version || !closure_holds(versions_[i], s, differentiable)) [[likely]]
      continue;
    std::string which;
    if (i < n_inputs) {
      which = "input " + std::to_string(i) + " of shape " + input_shapes_[i].str();
      if (next_[i].leaf && !next_[i].leaf->name.empty()) which += " '" + next_[i].leaf->name + "'";
    } else {
      which = "output 0";
    }
    throw_modified_in_place(name_ + ", " + which, s->version(), versions_[i].version);
  }
}

void throw_modified_in_place(const std::string& what, uint64_t version, uint64_t expected) {
  ::ddl::detail::throw_error(
      __FILE__, __LINE__,
      ::ddl::detail::str_cat(
          "one of the variables needed for gradient computation has been modified by an inplace "
          "operation: [",
          what, "] is at version ", version, "; expected version ", expected,
          " instead. Hint: something wrote into it in place (copy_, add_, fill_, an optimizer step, ...) "
          "after the op saved it and before backward; write into a clone() instead, or after backward"));
}

template <typename G>
void Node::validate_gradients(std::vector<G>& grads, const std::vector<bool>& needs) const {
  if (user_defined_) {
    DDL_CHECK(grads.size() == next_.size(), "backward of custom op '", name_, "' returned ", grads.size(),
              " gradients for ", next_.size(), " inputs; return one per input (undefined where not needed)");
  } else {
    DDL_ASSERT(grads.size() == next_.size(), name_, " returned ", grads.size(), " gradients for ", next_.size(),
               " inputs");
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!needs[i] || !defined(grads[i])) continue;
    if (user_defined_) {
      DDL_CHECK(shape_of(grads[i]) == input_shapes_[i], "backward of custom op '", name_,
                "' returned a gradient of shape ", shape_of(grads[i]), " for input ", i, " of shape ",
                input_shapes_[i]);
    } else {
      DDL_ASSERT(shape_of(grads[i]) == input_shapes_[i], name_, ": gradient ", i, " has shape ", shape_of(grads[i]),
                 " but the input had ", input_shapes_[i]);
    }
    if (dtype_of(grads[i]) != input_dtypes_[i]) [[unlikely]]  // See Note [Gradient dtype]
      grads[i] = grads[i].to(input_dtypes_[i]);
  }
}

std::vector<Tensor> Node::apply(const Tensor& grad_out) {
  std::vector<bool> needs(next_.size());
  for (size_t i = 0; i < next_.size(); ++i) needs[i] = next_[i].valid();
  return apply(grad_out, needs);
}

std::vector<Tensor> Node::apply(const Tensor& grad_out, const std::vector<bool>& needs) {
  DDL_CHECK(!released_, name_,
            ": trying to backward through the graph a second time; its saved tensors were freed. "
            "Pass retain_graph=true to the first backward() if you need to");
  check_versions(false);
  std::vector<Tensor> grads = fn_(grad_out, needs);
  validate_gradients(grads, needs);
  return grads;
}

std::vector<Variable> Node::apply_differentiable(const Variable& grad_out, const std::vector<bool>& needs) {
  DDL_CHECK(!released_, name_,
            ": trying to backward through the graph a second time; its saved tensors were freed. "
            "Pass retain_graph=true to the first backward() if you need to");
  check_versions(true);
  if (diff_fn_) {
    GradModeGuard grad_on(true);
    std::vector<Variable> grads = diff_fn_(grad_out, needs);
    validate_gradients(grads, needs);
    return grads;
  }
  std::vector<Tensor> plain;
  {
    NoGradGuard no_grad;
    plain = fn_(grad_out.data(), needs);
  }
  validate_gradients(plain, needs);
  // See Note [Double backward]: the result depends on this node's inputs and on grad_out,
  // so it gets edges to all of them, and a backward that raises.
  std::vector<Edge> edges;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (size_t i = 0; i < next_.size(); ++i)
    if (next_[i].valid()) edges.push_back(next_[i]), shapes.push_back({}), dtypes.push_back(input_dtypes_[i]);
  if (Edge e = edge_to(grad_out); e.valid())
    edges.push_back(std::move(e)), shapes.push_back(grad_out.shape()), dtypes.push_back(grad_out.dtype());
  std::vector<Variable> out(plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    if (!needs[i] || !plain[i].defined()) continue;
    const std::string op = name_;
    auto impl = std::make_shared<VariableImpl>();
    impl->data = std::move(plain[i]);
    impl->requires_grad = true;
    impl->grad_fn = std::make_shared<Node>(
        name_ + " (no double backward)", edges, shapes, dtypes,
        [op](const Tensor&, const std::vector<bool>&) -> std::vector<Tensor> {
          DDL_CHECK(false, "double backward through ", op,
                    " is not supported: its backward has no differentiable form (see Note [Double backward] and "
                    "docs/autograd.md); differentiate a graph without it, or give its make_result a DiffBackwardFn");
          return {};
        });
    out[i] = Variable(std::move(impl));
  }
  return out;
}

void Node::release() {
  fn_ = nullptr;
  diff_fn_ = nullptr;
  versions_.clear();
  released_ = true;
}

Variable make_result(Tensor out, const char* name, const std::vector<const Variable*>& inputs, BackwardFn backward,
                     DiffBackwardFn diff_backward) {
  bool any = false;
  if (is_grad_enabled())
    for (const Variable* v : inputs) any = any || (v->defined() && v->requires_grad());
  // An integer or bool result carries no gradient (PyTorch: only floating tensors require grad).
  if (!any || (out.defined() && !is_floating(out.dtype()))) return Variable(std::move(out));
  std::vector<Edge> edges;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  edges.reserve(inputs.size());
  shapes.reserve(inputs.size());
  dtypes.reserve(inputs.size());
  for (const Variable* v : inputs) {
    edges.push_back(edge_to(*v));
    shapes.push_back(v->defined() ? v->shape() : Shape{});
    dtypes.push_back(v->defined() ? v->dtype() : DType::Float32);
  }
  auto impl = std::make_shared<VariableImpl>();
  impl->grad_fn = std::make_shared<Node>(name, std::move(edges), std::move(shapes), std::move(dtypes),
                                         std::move(backward), std::move(diff_backward));
  impl->grad_fn->record_versions(inputs, out);  // See Note [Saved tensor versions]
  impl->data = std::move(out);
  impl->requires_grad = true;
  return Variable(std::move(impl));
}

Variable make_result(Tensor out, const char* name, std::initializer_list<const Variable*> inputs, BackwardFn backward,
                     DiffBackwardFn diff_backward) {
  return make_result(std::move(out), name, std::vector<const Variable*>(inputs), std::move(backward),
                     std::move(diff_backward));
}

Variable with_double_backward(Variable result, DiffBackwardFn diff_backward) {
  if (result.defined() && result.grad_fn()) result.grad_fn()->set_differentiable_backward(std::move(diff_backward));
  return result;
}

}  // namespace ddl::autograd
