// One emulated host's namespaces, held open by a holder process, and how a worker joins
// them. The holder enters the host's network namespace, unshares mount, UTS, IPC and PID
// namespaces (namespaces(7)), mounts a private tmpfs on /dev/shm, sets the hostname, and
// forks the host's "init" (pid 1 there), which mounts the host's /proc and only reaps.
// Every worker of the host setns(2)es into init's namespaces, so the workers of one host
// share /dev/shm and see each other's /proc/<pid>, and workers of two hosts do not.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ddl::cluster {

struct Holder {
  pid_t pid = -1;       // the holder, a child of ddlrun
  pid_t init_pid = -1;  // the host's pid 1, as ddlrun sees it; killing it ends the host's processes
};

// Starts the holder of the host whose network namespace is /run/netns/<netns>.
// Throws SetupError naming the host when a step fails.
Holder start_holder(const std::string& netns, const std::string& hostname);

// Kills the host's init (which ends every process in its PID namespace) and reaps the holder.
void stop_holder(Holder& h);

// In a freshly forked worker (single-threaded): joins `cgroup_dirs` (CPU, memory) and the
// holder's namespaces, then forks once more, since a PID namespace takes effect only for
// children (setns(2)). Returns in that grandchild, which goes on to exec the program; the
// calling process stays behind as its relay: it forwards signals to it and exits with its
// status (dying of the same signal when it did), so ddlrun's bookkeeping by pid still
// holds. On failure prints why and exits 127.
void enter_host(const Holder& h, const std::vector<std::string>& cgroup_dirs, const std::string& host_name);

}  // namespace ddl::cluster
