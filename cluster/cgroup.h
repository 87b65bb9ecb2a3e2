// A CPU quota per emulated host (--cpu hostI=FRACTION): a cgroup whose processes together
// get FRACTION of one CPU per period. cgroup v2 (cpu.max) where its cpu controller is
// available, else v1 (cpu.cfs_quota_us); see cgroups(7). A memory limit likewise
// (--memory hostI=BYTES: memory.max, else v1's memory.limit_in_bytes). Not I/O limits.
#pragma once

#include <string>

#include <ddl/cluster/state.h>

namespace ddl::cluster {

struct CpuGroup {
  std::string dir;      // the host's cgroup folder; its processes share the quota
  std::string version;  // "cgroup v2 (cpu.max)" or "cgroup v1 (cpu.cfs_quota_us)"
};

// Makes /…/ddlrun-<job>/host<I> with the quota, recording the job's folder in `state`.
CpuGroup make_cpu_group(const std::string& job, int host, double fraction, StateFile& state);

struct MemoryGroup {
  std::string dir;
  std::string version;  // "cgroup v2 (memory.max ...)" or "cgroup v1 (memory.limit_in_bytes ...)"
  std::string events;   // the file whose "oom_kill N" counts the OOM killer's kills there
};

// Makes /…/ddlrun-<job>/host<I> (in the memory hierarchy) limited to `bytes`, no swap.
MemoryGroup make_memory_group(const std::string& job, int host, long long bytes, StateFile& state);
// How many processes the kernel's OOM killer ended in the group so far.
long long oom_kills(const MemoryGroup& g);

// In a forked child: moves the calling process into `dir` (returns false and sets errno
// on failure). Uses only open/write, so it is safe after fork.
bool join_cgroup(const std::string& dir);

}  // namespace ddl::cluster
