// init_process_group: the one call a training program makes. It reads the launch
// environment (env.h), builds the rendezvous store (rank 0 serves a TCPStore unless
// ddlrun already does), creates the backend's ProcessGroup and makes it the default.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <ddl/dist/env.h>
#include <ddl/dist/process_group.h>
#include <ddl/dist/store/store.h>

namespace ddl::dist {

struct InitOptions {
  // "env://" (MASTER_ADDR/MASTER_PORT), "tcp://host:port", or "file:///shared/dir" (a fresh
  // directory per job on a filesystem every rank sees).
  std::string init_method = "env://";
  int rank = -1;                          // >= 0 overrides the environment
  int world_size = -1;                    // >= 1 overrides the environment
  Millis timeout = configured_timeout();  // rendezvous and every collective (DDL_TIMEOUT)
  // Where peers reach this rank. Default: DDL_GLOO_IFACE or GLOO_SOCKET_IFNAME when set,
  // else the local IP of the connection to the store (right on one node and across nodes).
  std::string hostname;
  std::string iface;
  std::shared_ptr<Store> store;  // rendezvous through this store instead of init_method
  // The whole rendezvous (connecting to the store, the backend's exchange through it) ends
  // by this one deadline; unset: `timeout` from init_process_group's call (or the group's
  // creation, for new_group).
  std::chrono::steady_clock::time_point deadline{};
};

// Creates the default process group. Every rank must call it; it returns once all have
// connected, and throws ddl::Error (naming what is missing) after opts.timeout otherwise.
// backend: "gloo" (CPU tensors); "nccl" (CUDA tensors; needs a build with NCCL and a GPU,
// and fails clearly without); "auto": the backend follows the tensors' device — gloo for
// CPU tensors and, where nccl is available, nccl for CUDA tensors (ProcessGroupAuto).
std::shared_ptr<ProcessGroup> init_process_group(const std::string& backend = "auto", InitOptions opts = {});
bool is_initialized();
// The default group; throws ddl::Error when init_process_group has not been called.
ProcessGroup& default_group();
std::shared_ptr<ProcessGroup> default_group_ptr();
// Waits (briefly) until every rank is done with the store, then tears the group down.
void destroy_process_group();
// Rank and world size of the default group: 0 and 1 before init (single-process runs).
int get_rank();
int get_world_size();
// The default group's own key space in the job's store, for small exchanges beside the
// group (the trace's clock alignment). Throws ddl::Error before init_process_group.
std::shared_ptr<Store> default_store();
// The environment init_process_group read (valid after init).
const LaunchEnv& launch_env();

// A second group over the default group's ranks, backend, addresses and timeout, in a key
// space of its own named `name`: what runs on it is counted apart from the default group
// (train_cifar's control group for reporting and evaluation). Collective: every rank calls
// it with the same name after init_process_group. Throws ddl::Error before it.
std::shared_ptr<ProcessGroup> new_group_beside_default(const std::string& name);

// Backends beyond gloo (a build with NCCL registers "nccl") plug in here.
using BackendFactory = std::function<std::shared_ptr<ProcessGroup>(std::shared_ptr<Store> store, int rank, int size,
                                                                   const InitOptions& opts)>;
void register_backend(const std::string& name, BackendFactory factory);
// True when init_process_group(name) can work here: "gloo" and "auto" always; "nccl" when
// the build has it and a GPU is usable.
bool is_backend_available(const std::string& name);
// A group of a named backend (or "auto") over `store`, without making it the default: for
// extra groups and tests. Give each group its own PrefixStore.
std::shared_ptr<ProcessGroup> new_group(const std::string& backend, std::shared_ptr<Store> store, int rank, int size,
                                        const InitOptions& opts = {});

}  // namespace ddl::dist
