// Module registration, traversal and printing.
#include <unordered_set>

#include <ddl/autograd/grad_mode.h>
#include <ddl/nn/module.h>

namespace ddl::nn {

namespace {
void check_name(const std::string& name, const std::string& owner) {
  DDL_CHECK(!name.empty() && name.find('.') == std::string::npos, owner,
            ": names of parameters, buffers and submodules must be non-empty and contain no '.', got '", name, "'");
}
template <typename List>
bool has(const List& list, const std::string& name) {
  for (const auto& [n, v] : list)
    if (n == name) return true;
  return false;
}
thread_local int clone_copy_depth = 0;  // live CloneCopyScopes on this thread
}  // namespace

Module::CloneCopyScope::CloneCopyScope() { ++clone_copy_depth; }
Module::CloneCopyScope::~CloneCopyScope() { --clone_copy_depth; }

// See Note [Copying modules].
Module::Module(const Module& other)
    : std::enable_shared_from_this<Module>(),
      type_name_(other.type_name_),
      training_(other.training_),
      parameters_(other.parameters_),
      buffers_(other.buffers_),
      children_(other.children_) {
  DDL_CHECK(clone_copy_depth > 0 || (parameters_.empty() && buffers_.empty() && children_.empty()), type_name_,
            ": a module with parameters, buffers or submodules cannot be copied (the copy would share them but not "
            "its training mode or configuration); hold it by std::shared_ptr to share it, or call clone() / "
            "nn::clone(module) for an independent copy");
}

Variable Module::forward(const Variable&) {
  DDL_CHECK(false, type_name_, ": this module has no single-input forward(); call its own forward overload");
  return {};
}

Variable Module::register_parameter(const std::string& name, Tensor value, bool requires_grad) {
  check_name(name, type_name_);
  DDL_CHECK(!has(parameters_, name) && !has(buffers_, name), type_name_, ": '", name, "' is already registered");
  Variable v(std::move(value), requires_grad);
  parameters_.emplace_back(name, v);
  return v;
}

Variable Module::register_buffer(const std::string& name, Tensor value) {
  check_name(name, type_name_);
  DDL_CHECK(!has(parameters_, name) && !has(buffers_, name), type_name_, ": '", name, "' is already registered");
  Variable v(std::move(value), false);
  buffers_.emplace_back(name, v);
  return v;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name(name, type_name_);
  DDL_CHECK(module != nullptr, type_name_, ": submodule '", name, "' is null");
  DDL_CHECK(!has(children_, name), type_name_, ": submodule '", name, "' is already registered");
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, bool params, bool recurse,
                     std::vector<std::pair<std::string, Variable>>& out) const {
  for (const auto& [n, v] : params ? parameters_ : buffers_) out.emplace_back(prefix + n, v);
  if (!recurse) return;
  for (const auto& [n, child] : children_) child->collect(prefix + n + ".", params, true, out);
}

namespace {
// Keeps the first name of a Variable reachable under several (a module registered twice,
// tied weights), as torch.nn.Module.named_parameters' remove_duplicate: an optimizer
// given parameters() then steps a shared weight once, not once per name.
std::vector<std::pair<std::string, Variable>> first_names(std::vector<std::pair<std::string, Variable>> all) {
  std::unordered_set<const VariableImpl*> seen;
  std::vector<std::pair<std::string, Variable>> out;
  for (auto& entry : all)
    if (seen.insert(entry.second.impl()).second) out.push_back(std::move(entry));
  return out;
}
}  // namespace

std::vector<std::pair<std::string, Variable>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Variable>> out;
  collect("", true, recurse, out);
  return first_names(std::move(out));
}

std::vector<std::pair<std::string, Variable>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Variable>> out;
  collect("", false, recurse, out);
  return first_names(std::move(out));
}

std::vector<Variable> Module::parameters(bool recurse) const {
  std::vector<Variable> out;
  for (auto& [n, v] : named_parameters(recurse)) out.push_back(v);
  return out;
}

std::vector<Variable> Module::buffers(bool recurse) const {
  std::vector<Variable> out;
  for (auto& [n, v] : named_buffers(recurse)) out.push_back(v);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules(const std::string& prefix,
                                                                                   bool include_self) const {
  // Preorder with a set of modules already listed, as torch.nn.Module.named_modules.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  std::unordered_set<const Module*> seen{this};
  if (include_self) {
    std::shared_ptr<Module> self = std::const_pointer_cast<Module>(weak_from_this().lock());
    if (!self) self = std::shared_ptr<Module>(std::shared_ptr<Module>(), const_cast<Module*>(this));  // non-owning
    out.emplace_back(prefix, std::move(self));
  }
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m, const std::string& at) {
    for (const auto& [n, c] : m.children_) {
      if (!seen.insert(c.get()).second) continue;
      const std::string name = at.empty() ? n : at + "." + n;
      out.emplace_back(name, c);
      walk(*c, name);
    }
  };
  walk(*this, prefix);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [n, m] : named_modules("", include_self)) out.push_back(std::move(m));
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [n, c] : children_) out.push_back(c);
  return out;
}

std::vector<std::pair<std::string, Variable>> Module::named_state() const {
  // PyTorch's state_dict order: each module's parameters, then its buffers, then its children;
  // like state_dict, a shared tensor appears under every name.
  std::vector<std::pair<std::string, Variable>> out;
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m, const std::string& prefix) {
    for (const auto& [n, v] : m.parameters_) out.emplace_back(prefix + n, v);
    for (const auto& [n, v] : m.buffers_) out.emplace_back(prefix + n, v);
    for (const auto& [n, c] : m.children_) walk(*c, prefix + n + ".");
  };
  walk(*this, "");
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, v] : named_parameters()) n += v.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::to(Device device) {
  for (auto& [n, v] : named_state()) {
    Variable h = v;
    h.set_data(v.data().to(device));
    if (h.grad().defined()) h.set_grad(h.grad().to(device));
  }
}

void Module::to(DType dtype) {
  // Only floating state converts; integer buffers (num_batches_tracked) keep their type.
  for (auto& [n, v] : named_state()) {
    if (!is_floating(v.dtype())) continue;
    Variable h = v;
    h.set_data(v.data().to(dtype));
    if (h.grad().defined()) h.set_grad(h.grad().to(dtype));
  }
}

void Module::zero_grad(bool set_to_none) {
  for (auto& v : parameters()) v.zero_grad(set_to_none);
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& [n, c] : children_) c->apply(fn);
}

std::shared_ptr<Module> Module::clone() const {
  DDL_CHECK(false, type_name_, ": this module cannot be cloned; derive it from nn::Cloneable<", type_name_,
            "> and implement reset() (see Note [Cloning] in nn/module.h)");
  return nullptr;
}

void Module::clear_registrations() {
  parameters_.clear();
  buffers_.clear();
  children_.clear();
  trace_label_ = trace_parent_ = nullptr;
}

void Module::copy_state_from(const Module& other) {
  auto copy_list = [&](std::vector<std::pair<std::string, Variable>>& mine,
                       const std::vector<std::pair<std::string, Variable>>& theirs, const char* what) {
    DDL_CHECK(mine.size() == theirs.size(), type_name_, ": clone: reset() registered ", mine.size(), " ", what,
              ", the original has ", theirs.size());
    for (size_t i = 0; i < mine.size(); ++i) {
      const auto& [name, src] = theirs[i];
      Variable dst = mine[i].second;
      DDL_CHECK(mine[i].first == name, type_name_, ": clone: reset() registered '", mine[i].first,
                "' where the original has '", name, "'");
      dst.set_data(src.data().clone());
      dst.requires_grad_(src.requires_grad());
      if (src.grad().defined()) dst.set_grad(src.grad().clone());
    }
  };
  copy_list(parameters_, other.parameters_, "parameters");
  copy_list(buffers_, other.buffers_, "buffers");
  DDL_CHECK(children_.size() == other.children_.size(), type_name_, ": clone: reset() registered ", children_.size(),
            " submodules, the original has ", other.children_.size());
  for (size_t i = 0; i < children_.size(); ++i) {
    DDL_CHECK(children_[i].first == other.children_[i].first, type_name_, ": clone: reset() registered submodule '",
              children_[i].first, "' where the original has '", other.children_[i].first, "'");
    children_[i].second->copy_state_from(*other.children_[i].second);
  }
  training_ = other.training_;
}

void Module::pretty_print(std::ostream& os, int indent) const {
  os << type_name_ << '(';
  if (children_.empty()) {
    os << extra_repr() << ')';
    return;
  }
  const std::string pad(static_cast<size_t>(indent + 2), ' ');
  os << '\n';
  if (!extra_repr().empty()) os << pad << extra_repr() << '\n';
  for (const auto& [n, c] : children_) {
    os << pad << '(' << n << "): ";
    c->pretty_print(os, indent + 2);
    os << '\n';
  }
  os << std::string(static_cast<size_t>(indent), ' ') << ')';
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  m.pretty_print(os);
  return os;
}

}  // namespace ddl::nn
