// The strategy registry (see registry.h): a list in registration order under a mutex,
// filled with the built-ins on first use.
#include <algorithm>
#include <mutex>

#include <ddl/base/error.h>
#include <ddl/dist/sync/registry.h>

namespace ddl::dist {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<RegisteredSyncStrategy> entries;
};

Registry& storage() {
  static Registry r;
  return r;
}

thread_local std::string t_origin = "built-in";
thread_local bool t_registering_builtins = false;

// The built-ins register through the public call, which itself comes here first: the
// flag lets those nested calls through instead of waiting on the once_flag they run under.
void ensure_builtins() {
  if (t_registering_builtins) return;
  static std::once_flag once;
  std::call_once(once, [] {
    t_registering_builtins = true;
    try {
      detail::register_builtin_sync_strategies();
    } catch (...) {
      t_registering_builtins = false;
      throw;
    }
    t_registering_builtins = false;
  });
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

std::string base_name(const std::string& spec) { return spec.substr(0, spec.find(':')); }

}  // namespace

void register_sync_strategy(const std::string& name, SyncFactory make, SyncStrategyInfo info) {
  ensure_builtins();
  DDL_CHECK(valid_name(name) && name != "." && name != "..", "register_sync_strategy: '", name,
            "' is not a strategy name: use 1-64 letters, digits, '-', '_' or '.'");
  DDL_CHECK(make != nullptr, "register_sync_strategy(", name, "): the factory is empty");
  Registry& r = storage();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& e : r.entries)
    DDL_CHECK(e.name != name, "register_sync_strategy: a strategy named '", name, "' is already registered (by ",
              e.origin, "); choose another name");
  r.entries.push_back({name, std::move(info), std::move(make), t_origin});
}

void register_sync_strategy(const std::string& name, SimpleSyncFactory make, const std::string& help) {
  DDL_CHECK(make != nullptr, "register_sync_strategy(", name, "): the factory is empty");
  register_sync_strategy(
      name,
      [make = std::move(make)](std::shared_ptr<nn::Module> m, std::shared_ptr<ProcessGroup> g, const std::string&) {
        return make(std::move(m), std::move(g));
      },
      SyncStrategyInfo{.help = help});
}

std::vector<RegisteredSyncStrategy> sync_strategies() {
  ensure_builtins();
  Registry& r = storage();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.entries;
}

std::string sync_strategy_usages(const std::string& separator) {
  std::string out;
  for (const auto& e : sync_strategies()) out += (out.empty() ? "" : separator) + e.usage();
  return out;
}

std::string sync_spec_problem(const std::string& spec) {
  const std::string name = base_name(spec);
  for (const auto& e : sync_strategies()) {
    if (e.name != name) continue;
    const bool has_arg = spec.size() > name.size();
    if (e.info.arg.empty()) return has_arg ? "'" + name + "' takes no argument: use plain '" + name + "'" : "";
    if (!has_arg) return "'" + spec + "' needs its " + e.info.arg + ": " + e.usage() + ", e.g. " + e.example();
    return e.info.check_arg ? e.info.check_arg(spec.substr(name.size() + 1)) : "";
  }
  return "unknown sync strategy '" + spec + "'; registered: " + sync_strategy_usages() +
         " (a plugin adds more: --plugin FILE.so, docs/sync.md)";
}

RegisteredSyncStrategy find_sync_strategy(const std::string& spec) {
  for (auto& e : sync_strategies())
    if (e.name == base_name(spec)) return e;
  ::ddl::detail::throw_error(__FILE__, __LINE__, "find_sync_strategy: " + sync_spec_problem(spec));
}

bool sync_spec_averages_gradients(const std::string& spec) {
  for (const auto& e : sync_strategies())
    if (e.name == base_name(spec)) return e.info.averages_gradients;
  return false;
}

namespace detail {

SyncRegistrationOrigin::SyncRegistrationOrigin(const std::string& origin) : previous_(t_origin) {
  ensure_builtins();  // the built-ins keep their own origin
  t_origin = origin;
}
SyncRegistrationOrigin::~SyncRegistrationOrigin() { t_origin = previous_; }

void unregister_sync_strategies_from(const std::string& origin) {
  Registry& r = storage();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::erase_if(r.entries, [&](const RegisteredSyncStrategy& e) { return e.origin == origin; });
}

}  // namespace detail

}  // namespace ddl::dist
