// The process-wide table of forward hooks (forward_hooks.h). It is scanned on every
// hooked container's child call, so the common case (no hooks) is one atomic load.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include <ddl/nn/forward_hooks.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/transformer.h>

namespace ddl::nn {

namespace {
struct Entry {
  int id;
  std::weak_ptr<Module> module;
  ForwardHook hook;
};
std::mutex mu;
std::vector<Entry> entries;
std::atomic<int> live{0};
int next_id = 0;
}  // namespace

int add_forward_hook(const std::shared_ptr<Module>& module, ForwardHook hook) {
  DDL_CHECK(module != nullptr, "add_forward_hook: no module");
  std::lock_guard<std::mutex> lock(mu);
  std::erase_if(entries, [](const Entry& e) { return e.module.expired(); });
  for (const Entry& e : entries)
    DDL_CHECK(e.module.lock() != module, "add_forward_hook: ", module->type_name(), " already has a forward hook");
  entries.push_back({next_id, module, std::move(hook)});
  live.store(static_cast<int>(entries.size()));
  return next_id++;
}

void remove_forward_hook(int id) {
  std::lock_guard<std::mutex> lock(mu);
  std::erase_if(entries, [id](const Entry& e) { return e.id == id || e.module.expired(); });
  live.store(static_cast<int>(entries.size()));
}

std::vector<std::shared_ptr<Module>> hooked_children(const Module& parent) {
  if (dynamic_cast<const Sequential*>(&parent)) return parent.children();
  if (const auto* enc = dynamic_cast<const TransformerEncoder*>(&parent)) return enc->layers->children();
  return {};
}

bool any_forward_hooks() { return live.load(std::memory_order_relaxed) != 0; }

Variable run_forward_hooked(Module& child, const std::function<Variable()>& body) {
  if (live.load(std::memory_order_relaxed) == 0) [[likely]]
    return body();
  ForwardHook hook;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const Entry& e : entries) {
      const auto m = e.module.lock();
      if (m.get() == &child) hook = e.hook;
    }
  }
  if (hook.pre) hook.pre(child);
  Variable out = body();
  return hook.post ? hook.post(child, std::move(out)) : out;
}

}  // namespace ddl::nn
