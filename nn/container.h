// ModuleList and ModuleDict: hold submodules so that parameters(), state dicts,
// to() and train() see them, as torch.nn.ModuleList / ModuleDict. They have no
// forward of their own: the owning module decides how to call them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ddl/nn/module.h>

namespace ddl::nn {

// Children are named "0", "1", ... by position, as in PyTorch.
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  explicit ModuleList(std::vector<std::shared_ptr<Module>> modules);
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return named_children().size(); }
  std::shared_ptr<Module> operator[](size_t i) const;
  // The i-th module as its own class; throws when it is another class.
  template <typename M>
  std::shared_ptr<M> at(size_t i) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[i]);
    DDL_CHECK(m != nullptr, "ModuleList: module ", i, " is a ", (*this)[i]->type_name(), ", not the class asked for");
    return m;
  }
  // Clones each element (each must be clonable).
  std::shared_ptr<Module> clone() const override;
};

// Children keep insertion order; keys follow parameter-name rules (non-empty, no '.').
class ModuleDict : public Module {
 public:
  ModuleDict() : Module("ModuleDict") {}
  void insert(const std::string& key, std::shared_ptr<Module> module);
  bool contains(const std::string& key) const;
  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <typename M>
  std::shared_ptr<M> at(const std::string& key) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[key]);
    DDL_CHECK(m != nullptr, "ModuleDict: '", key, "' is a ", (*this)[key]->type_name(), ", not the class asked for");
    return m;
  }
  std::vector<std::string> keys() const;
  size_t size() const { return named_children().size(); }
  std::shared_ptr<Module> clone() const override;
};

}  // namespace ddl::nn
