// Forward hooks on a submodule, for wrappers that must act around a child's forward
// without the child's help (FullyShardedDataParallel gathers a unit's parameters before
// it runs and frees them after: dist/fsdp/), as torch.nn.Module's
// register_forward_pre_hook and register_forward_hook. Only containers that run their
// children in sequence call them: Sequential, and TransformerEncoder for its layers;
// call_child does not, so a module called directly by its parent is never hooked.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <ddl/nn/module.h>

namespace ddl::nn {

// Either may be left out of a designated initializer (the {} keep -Wextra quiet).
struct ForwardHook {
  std::function<void(Module&)> pre{};                 // before forward (may be empty)
  std::function<Variable(Module&, Variable)> post{};  // after; returns the output to use (may be empty)
};

// Hooks `module` (held weakly: a dead module's hook is dropped). Returns an id for
// remove_forward_hook. A module takes at most one hook; a second is refused.
int add_forward_hook(const std::shared_ptr<Module>& module, ForwardHook hook);
void remove_forward_hook(int id);
// Whether any module has a hook now (Sequential fuses children only when none has).
bool any_forward_hooks();
// The children `parent` runs through run_forward_hooked, in call order: a Sequential's
// children, a TransformerEncoder's layers; empty for any other module.
std::vector<std::shared_ptr<Module>> hooked_children(const Module& parent);

// body() (the child's forward), between the child's hooks when it has any. Containers call it.
Variable run_forward_hooked(Module& child, const std::function<Variable()>& body);

}  // namespace ddl::nn
