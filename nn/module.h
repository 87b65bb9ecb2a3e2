// Module: the base of every layer and model, as in LibTorch. A module owns
// named parameters (Variables that require grad), buffers (state such as
// running statistics, saved but not trained) and submodules, all kept in
// registration order so names like "features.1.running_mean" are stable and
// match the same network written in PyTorch.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <ddl/autograd/anomaly.h>
#include <ddl/autograd/scope.h>
#include <ddl/autograd/variable.h>

namespace ddl::nn {

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module& operator=(const Module&) = delete;
  // Moving hands every registration to the new object (the old one is left empty), so
  // `std::make_shared<nn::Linear>(nn::Linear(4, 2))` and Sequential's variadic form work.
  Module(Module&&) noexcept = default;

  // The single-input forward used by Sequential; layers override it.
  virtual Variable forward(const Variable& x);
  Variable operator()(const Variable& x) { return forward(x); }

  const std::string& type_name() const { return type_name_; }

  // ---- registration (call from constructors) ----
  // Returns the registered handle; copies of it share the same state.
  Variable register_parameter(const std::string& name, Tensor value, bool requires_grad = true);
  Variable register_buffer(const std::string& name, Tensor value);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // ---- traversal, in registration order, with dotted names ----
  // A parameter or buffer reachable under several names (a submodule registered twice)
  // is listed once, under its first name, as in PyTorch; named_state() lists every name.
  std::vector<std::pair<std::string, Variable>> named_parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Variable>> named_buffers(bool recurse = true) const;
  std::vector<Variable> parameters(bool recurse = true) const;
  std::vector<Variable> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }
  std::vector<std::shared_ptr<Module>> children() const;
  // This module (named "", or `prefix`) and every descendant, parents first, with dotted
  // names ("features.0"): torch.nn.Module.named_modules, which lists a module registered
  // in several places once, under its first name. The entry for this module owns it when
  // it is held by a std::shared_ptr; for a module on the stack it is a non-owning pointer,
  // valid while the module lives.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules(const std::string& prefix = "",
                                                                             bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  // Parameters and buffers by name: what checkpoints hold.
  std::vector<std::pair<std::string, Variable>> named_state() const;
  int64_t parameter_count() const;

  // ---- modes and bulk operations ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Moves (or converts) every parameter and buffer in place: handles stay valid.
  void to(Device device);
  void to(DType dtype);
  void zero_grad(bool set_to_none = true);
  // Calls fn on this module and every descendant, parents first.
  void apply(const std::function<void(Module&)>& fn);

  // One line describing this module's configuration, e.g. "in_features=4, out_features=2".
  virtual std::string extra_repr() const { return ""; }
  // The module tree as PyTorch prints it.
  void pretty_print(std::ostream& os, int indent = 0) const;

  // A deep copy (as copy.deepcopy in PyTorch): equal values, training flags and
  // requires_grad, separate storage on the same device. Modules deriving from
  // Cloneable<T> (below) and the containers support it; others throw. See Note [Cloning].
  virtual std::shared_ptr<Module> clone() const;

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  // Refused for a module that has parameters, buffers or submodules, except inside
  // clone(): see Note [Copying modules]. A module with none of them copies freely.
  Module(const Module& other);
  // While one lives on this thread, copies are allowed: Cloneable::clone() copies the
  // configuration members this way and then replaces every registration.
  struct CloneCopyScope {
    CloneCopyScope();
    ~CloneCopyScope();
    CloneCopyScope(const CloneCopyScope&) = delete;
    CloneCopyScope& operator=(const CloneCopyScope&) = delete;
  };
  // Forgets every registration, so that reset() can register afresh.
  void clear_registrations();
  // Copies values, gradients, requires_grad and training flags from `other`, which
  // must have the same names and shapes (this tree's storage stays its own).
  void copy_state_from(const Module& other);
  void set_training_flag(bool on) { training_ = on; }

 private:
  void collect(const std::string& prefix, bool params, bool recurse,
               std::vector<std::pair<std::string, Variable>>& out) const;

  std::string type_name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, Variable>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  // The timeline's name for this module and the scope it was named under (call_child).
  const autograd::ScopeLabel* trace_label_ = nullptr;
  const autograd::ScopeLabel* trace_parent_ = nullptr;
  friend Variable call_child(Module& child, const std::string& name, const Variable& x);
};

std::ostream& operator<<(std::ostream& os, const Module& m);

// Note [Copying modules]
// ddl has no holder class (LibTorch's TORCH_MODULE): a module is shared by holding it in
// a std::shared_ptr, which is what copying a LibTorch holder does. Copying the module
// object itself (`nn::Linear b = a;`) could only be half a copy: the registered
// parameters, buffers and submodules are handles, so they would be shared, while the
// training flag and the configuration members would not (b.eval() would switch a's
// submodules to evaluation but leave a in training). So such a copy throws ddl::Error,
// pointing at std::shared_ptr (to share) or clone() (to copy deeply). C++ cannot reject it
// at compile time without also rejecting the copy clone() itself makes: a derived class's
// copy constructor is public and implicit. Modules with no registrations (pooling,
// activations) hold nothing to share, so their copies are whole copies and are allowed;
// moves are allowed too, since the moved-from module keeps nothing. Still refused at run
// time, where C++ copies: std::vector<nn::Linear>{a, b} (an initializer_list copies), and a
// module class of the user's that declares a destructor (it has no implicit move, so
// std::move copies; Sequential's variadic constructor rejects such a class at compile time).

// Note [Cloning]
// A module is clonable when it derives from Cloneable<T> instead of Module and
// implements reset(): (re)create every parameter, buffer and submodule, assigning
// its member handles, exactly as the constructor does (the constructor just calls
// reset()). clone() then copy-constructs T (its configuration members), drops the
// copied registrations, calls reset() on the copy, and copies the original's state
// into the new tensors. This is LibTorch's torch::nn::Cloneable contract. reset()
// draws fresh initial values from the default generator before they are
// overwritten, so cloning advances that generator.
template <typename Derived>
class Cloneable : public Module {
 public:
  using Module::Module;
  virtual void reset() = 0;
  std::shared_ptr<Module> clone() const override {
    std::shared_ptr<Derived> copy;
    {
      CloneCopyScope allow_copy;  // See Note [Copying modules]
      copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    }
    copy->clear_registrations();
    copy->reset();
    copy->copy_state_from(*this);
    return copy;
  }
};

// clone() typed as the module's own class: `auto copy = nn::clone(*layer);`.
template <typename M>
std::shared_ptr<M> clone(const M& module) {
  auto copy = std::dynamic_pointer_cast<M>(module.clone());
  DDL_CHECK(copy != nullptr, module.type_name(), ": clone() returned a different class");
  return copy;
}

// child.forward(x), run as the child `name` of the module whose forward is running: while
// tracing, a "forward" span named by its dotted path, and its nodes' backward spans (see
// Note [Module scopes] in autograd/scope.cpp); while anomaly detection is on, the module its
// nodes name in errors (autograd/anomaly.h). Exactly child.forward(x) when both are off.
inline Variable call_child(Module& child, const std::string& name, const Variable& x) {
  if (!trace::enabled() && !autograd::is_anomaly_enabled()) [[likely]]
    return child.forward(x);
  const autograd::ScopeLabel* parent = autograd::current_scope();
  if (!child.trace_label_ || child.trace_parent_ != parent) {
    const std::string path = parent ? std::string(parent->name) + "." + name : name;
    child.trace_label_ = autograd::scope_label(path, parent ? std::string_view(parent->top) : std::string_view(path));
    child.trace_parent_ = parent;
  }
  autograd::ScopeGuard scope(child.trace_label_);
  return child.forward(x);
}

}  // namespace ddl::nn
