// Strategies from a shared library (a student's libmine.so), loaded by train_cifar and
// sync_study --plugin: load_sync_plugin dlopen()s the file and calls the function it
// exports, which registers its strategies (docs/sync.md, "Writing your own strategy").
// Loading code runs it with the caller's rights, so files others could change are refused.
#pragma once

#include <string>

// What a plugin defines, once: calls ddl::dist::register_sync_strategy for each of its
// strategies. A thrown error aborts the loading and names the plugin.
extern "C" void ddl_register_strategies();

namespace ddl::dist {

inline constexpr const char* kSyncPluginEntry = "ddl_register_strategies";

// Loads `path` (RTLD_NOW, RTLD_LOCAL) and calls its ddl_register_strategies(). Requires a
// regular file owned by this user or root and writable by no one else (else a ddl::Error,
// naming the file, says why and how to fix it); the same errors for a file that cannot be
// loaded, that lacks the function, that registers no strategy or a name already taken,
// in which case none of its strategies stays registered. Loading one file twice does
// nothing the second time. The library stays loaded until the process exits.
void load_sync_plugin(const std::string& path);

}  // namespace ddl::dist
