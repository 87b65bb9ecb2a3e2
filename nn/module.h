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

#include "autograd/variable.h"

namespace ddl::nn {

class Module {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

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
  std::vector<std::pair<std::string, Variable>> named_parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Variable>> named_buffers(bool recurse = true) const;
  std::vector<Variable> parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }
  std::vector<std::shared_ptr<Module>> children() const;
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

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  void collect(const std::string& prefix, bool params, bool recurse,
               std::vector<std::pair<std::string, Variable>>& out) const;

  std::string type_name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, Variable>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

std::ostream& operator<<(std::ostream& os, const Module& m);

}  // namespace ddl::nn
