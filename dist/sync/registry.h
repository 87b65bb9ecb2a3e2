// The one list of synchronisation strategies. Built-in strategies and a student's own
// register here by name; make_sync_strategy, train_cifar --sync, sync_study and the
// tests all read it (docs/sync.md, "Writing your own strategy"). It loads no code
// itself: plugin.h does that.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ddl/dist/sync/strategy.h>

namespace ddl::dist {

// Builds the strategy for one model and process group. `arg` is what follows ':' in the
// spec ("4" in local-sgd:4), empty for a strategy that takes no argument.
using SyncFactory = std::function<std::unique_ptr<SyncStrategy>(
    std::shared_ptr<nn::Module> model, std::shared_ptr<ProcessGroup> group, const std::string& arg)>;
// The common case: a strategy without an argument.
using SimpleSyncFactory = std::function<std::unique_ptr<SyncStrategy>(std::shared_ptr<nn::Module> model,
                                                                      std::shared_ptr<ProcessGroup> group)>;

// Fields left out of a designated initializer take these defaults (the {} keep -Wextra quiet).
struct SyncStrategyInfo {
  std::string help{};  // one line for --help and listings
  // True when every step averages the gradients, so N ranks compute the same SGD as one
  // process on the whole batch (sync_study compares such strategies' losses); false for
  // model averaging (stepwise, local-sgd).
  bool averages_gradients = true;
  // Empty: the spec is the bare name. Else the argument's name, e.g. "K": the spec must be
  // name:K, and the factory gets K as `arg`.
  std::string arg{};
  std::string example{};  // a spec to run when none is chosen, e.g. "local-sgd:4" (default: the name)
  // Why `arg` is unacceptable, or "" (called before anything touches the network).
  std::function<std::string(const std::string& arg)> check_arg{};
};

struct RegisteredSyncStrategy {
  std::string name;
  SyncStrategyInfo info;
  SyncFactory make;
  std::string origin;  // "built-in", or the plugin file that registered it
  std::string usage() const { return info.arg.empty() ? name : name + ":" + info.arg; }  // "local-sgd:K"
  std::string example() const { return info.example.empty() ? usage() : info.example; }
};

// Adds a strategy. Requires a name of letters, digits, '-', '_' or '.' (it names files in
// sync_study) not registered yet, and a factory; otherwise throws a ddl::Error naming the
// strategy. Thread-safe; callable from a plugin's ddl_register_strategies().
void register_sync_strategy(const std::string& name, SyncFactory make, SyncStrategyInfo info);
void register_sync_strategy(const std::string& name, SimpleSyncFactory make, const std::string& help);

// Every registered strategy, built-ins first, then in order of registration.
std::vector<RegisteredSyncStrategy> sync_strategies();
// "ddp | allreduce | ... | local-sgd:K": every usage, for help text and errors.
std::string sync_strategy_usages(const std::string& separator = " | ");

// "" when `spec` names a registered strategy with an acceptable argument; else why not
// (without an operation name in front).
std::string sync_spec_problem(const std::string& spec);
// True when `spec` names a registered strategy that averages gradients (an exact one).
bool sync_spec_averages_gradients(const std::string& spec);
// The registered strategy `spec` names (the part before ':'); throws a ddl::Error when none.
RegisteredSyncStrategy find_sync_strategy(const std::string& spec);

namespace detail {
// Registers ddp, allreduce, gather-scatter, ring, param-server, stepwise and local-sgd
// (strategy.cpp); the registry calls it once, before any other access.
void register_builtin_sync_strategies();
// While alive, strategies registered on this thread are recorded as coming from `origin`.
class SyncRegistrationOrigin {
 public:
  explicit SyncRegistrationOrigin(const std::string& origin);
  ~SyncRegistrationOrigin();
  SyncRegistrationOrigin(const SyncRegistrationOrigin&) = delete;
  SyncRegistrationOrigin& operator=(const SyncRegistrationOrigin&) = delete;

 private:
  std::string previous_;
};
// Removes every strategy `origin` registered (a plugin whose registration failed half-way).
void unregister_sync_strategies_from(const std::string& origin);
}  // namespace detail

}  // namespace ddl::dist
