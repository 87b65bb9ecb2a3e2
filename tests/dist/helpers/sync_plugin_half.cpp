// A plugin whose registration fails half-way: "half-ok" registers, then "ring" is taken.
// load_sync_plugin must take "half-ok" back (its factory lives in this library, which
// is unloaded), for test_sync_registry.
#include <ddl/dist/sync/registry.h>

extern "C" void ddl_register_strategies() {
  using namespace ddl::dist;
  const SimpleSyncFactory none = [](std::shared_ptr<ddl::nn::Module>, std::shared_ptr<ProcessGroup>) {
    return std::unique_ptr<SyncStrategy>();
  };
  register_sync_strategy("half-ok", none, "registers, then its sibling fails");
  register_sync_strategy("ring", none, "taken");
}
