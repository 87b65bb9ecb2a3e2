// ModuleList and ModuleDict: registration, lookup, and clone (element by element).
#include <ddl/nn/container.h>

namespace ddl::nn {

ModuleList::ModuleList(std::vector<std::shared_ptr<Module>> modules) : Module("ModuleList") {
  for (auto& m : modules) push_back(std::move(m));
}

void ModuleList::push_back(std::shared_ptr<Module> module) { add_child(std::to_string(size()), std::move(module)); }

std::shared_ptr<Module> ModuleList::operator[](size_t i) const {
  DDL_CHECK(i < size(), "ModuleList: index ", i, " out of range for ", size(), " modules");
  return named_children()[i].second;
}

std::shared_ptr<Module> ModuleList::clone() const {
  auto copy = std::make_shared<ModuleList>();
  for (const auto& [name, m] : named_children()) copy->push_back(m->clone());
  copy->set_training_flag(is_training());
  return copy;
}

void ModuleDict::insert(const std::string& key, std::shared_ptr<Module> module) { add_child(key, std::move(module)); }

bool ModuleDict::contains(const std::string& key) const {
  for (const auto& [name, m] : named_children())
    if (name == key) return true;
  return false;
}

std::shared_ptr<Module> ModuleDict::operator[](const std::string& key) const {
  for (const auto& [name, m] : named_children())
    if (name == key) return m;
  DDL_CHECK(false, "ModuleDict: no module named '", key, "'");
  return nullptr;
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [name, m] : named_children()) out.push_back(name);
  return out;
}

std::shared_ptr<Module> ModuleDict::clone() const {
  auto copy = std::make_shared<ModuleDict>();
  for (const auto& [name, m] : named_children()) copy->insert(name, m->clone());
  copy->set_training_flag(is_training());
  return copy;
}

}  // namespace ddl::nn
