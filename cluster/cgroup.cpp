// make_cpu_group and join_cgroup (see cgroup.h). The hierarchy is found in /proc/self/mounts:
// a cgroup2 mount whose cgroup.controllers lists "cpu", else a v1 mount with the cpu option.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <ddl/cluster/cgroup.h>
#include <ddl/cluster/command.h>

namespace ddl::cluster {

namespace fs = std::filesystem;

namespace {

bool has_word(const std::string& list, const std::string& word, char sep) {
  std::istringstream in(list);
  for (std::string w; std::getline(in, w, sep);)
    if (w == word) return true;
  return false;
}

// The mount point of the cgroup hierarchy to use for `controller` and its version (2 or 1); 0 if none.
int find_hierarchy(const std::string& controller, std::string* mount) {
  std::ifstream m("/proc/self/mounts");
  std::string dev, dir, type, opts, rest, v1;
  while (m >> dev >> dir >> type >> opts && std::getline(m, rest)) {
    if (type == "cgroup2") {
      std::ifstream c(dir + "/cgroup.controllers");
      std::string controllers;
      std::getline(c, controllers);
      if (has_word(controllers, controller, ' ')) {
        *mount = dir;
        return 2;
      }
    } else if (type == "cgroup" && has_word(opts, controller, ',') && v1.empty()) {
      v1 = dir;
    }
  }
  if (v1.empty()) return 0;
  *mount = v1;
  return 1;
}

void write_file(const std::string& path, const std::string& value, bool tolerate_failure = false) {
  std::ofstream f(path);
  f << value;
  f.flush();
  if (!f && !tolerate_failure)
    throw SetupError("cannot write '" + value + "' to " + path + ": " + std::strerror(errno));
}

}  // namespace

CpuGroup make_cpu_group(const std::string& job, int host, double fraction, StateFile& state) {
  std::string mount;
  const int version = find_hierarchy("cpu", &mount);
  if (version == 0)
    throw SetupError("--cpu host" + std::to_string(host) +
                     ": no cgroup hierarchy with the cpu controller is mounted (neither a cgroup2 mount listing "
                     "'cpu' in cgroup.controllers nor a v1 'cpu' mount); mount one or drop --cpu");
  const std::string job_dir = mount + "/ddlrun-" + job;
  bool recorded = false;
  for (const Resource& r : state.resources()) recorded |= r.kind == "cgroup" && r.name == job_dir;
  if (!recorded) state.record({"cgroup", job_dir});
  std::error_code ec;
  fs::create_directories(job_dir, ec);
  if (ec) throw SetupError("--cpu: cannot create cgroup " + job_dir + ": " + ec.message());
  const long period = 100000, quota = std::max(1000L, static_cast<long>(fraction * period));
  CpuGroup g{job_dir + "/host" + std::to_string(host), ""};
  if (version == 2) {
    // The controller must be enabled in every parent's subtree_control (cgroups(7), v2).
    write_file(mount + "/cgroup.subtree_control", "+cpu", /*tolerate_failure=*/true);
    write_file(job_dir + "/cgroup.subtree_control", "+cpu");
    fs::create_directories(g.dir, ec);
    if (ec) throw SetupError("--cpu: cannot create cgroup " + g.dir + ": " + ec.message());
    write_file(g.dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(period));
    g.version = "cgroup v2 (cpu.max " + std::to_string(quota) + " " + std::to_string(period) + ")";
  } else {
    fs::create_directories(g.dir, ec);
    if (ec) throw SetupError("--cpu: cannot create cgroup " + g.dir + ": " + ec.message());
    write_file(g.dir + "/cpu.cfs_period_us", std::to_string(period));
    write_file(g.dir + "/cpu.cfs_quota_us", std::to_string(quota));
    g.version = "cgroup v1 (cpu.cfs_quota_us " + std::to_string(quota) + " of " + std::to_string(period) + ")";
  }
  return g;
}

MemoryGroup make_memory_group(const std::string& job, int host, long long bytes, StateFile& state) {
  std::string mount;
  const int version = find_hierarchy("memory", &mount);
  const std::string flag = "--memory host" + std::to_string(host);
  if (version == 0)
    throw SetupError(flag + ": no cgroup hierarchy with the memory controller is mounted; mount one or drop --memory");
  const std::string job_dir = mount + "/ddlrun-" + job;
  bool recorded = false;
  for (const Resource& r : state.resources()) recorded |= r.kind == "cgroup" && r.name == job_dir;
  if (!recorded) state.record({"cgroup", job_dir});
  std::error_code ec;
  fs::create_directories(job_dir, ec);
  if (ec) throw SetupError(flag + ": cannot create cgroup " + job_dir + ": " + ec.message());
  MemoryGroup g{job_dir + "/host" + std::to_string(host), "", ""};
  if (version == 2) {
    write_file(mount + "/cgroup.subtree_control", "+memory", /*tolerate_failure=*/true);
    write_file(job_dir + "/cgroup.subtree_control", "+memory");
  }
  fs::create_directories(g.dir, ec);
  if (ec) throw SetupError(flag + ": cannot create cgroup " + g.dir + ": " + ec.message());
  const std::string limit = std::to_string(bytes);
  // No swap either, where the kernel counts it: a limit that swaps only slows the rank down.
  if (version == 2) {
    write_file(g.dir + "/memory.max", limit);
    const bool swap = fs::exists(g.dir + "/memory.swap.max");
    if (swap) write_file(g.dir + "/memory.swap.max", "0");
    g.version = "cgroup v2 (memory.max " + limit + (swap ? ", memory.swap.max 0)" : ")");
    g.events = g.dir + "/memory.events";
  } else {
    write_file(g.dir + "/memory.limit_in_bytes", limit);
    const bool swap = fs::exists(g.dir + "/memory.memsw.limit_in_bytes");
    if (swap) write_file(g.dir + "/memory.memsw.limit_in_bytes", limit);
    g.version = "cgroup v1 (memory.limit_in_bytes " + limit + (swap ? ", memsw the same)" : ")");
    g.events = g.dir + "/memory.oom_control";
  }
  return g;
}

long long oom_kills(const MemoryGroup& g) {
  // memory.events (v2) and memory.oom_control (v1, Linux 4.13+) both hold "oom_kill N".
  std::ifstream f(g.events);
  std::string key;
  long long n = 0;
  while (f >> key >> n)
    if (key == "oom_kill") return n;
  return 0;
}

bool join_cgroup(const std::string& dir) {
  // Called between fork and exec while ddlrun may have threads: no allocation (fork(2)).
  char path[4096];
  if (std::snprintf(path, sizeof path, "%s/cgroup.procs", dir.c_str()) >= static_cast<int>(sizeof path)) {
    errno = ENAMETOOLONG;
    return false;
  }
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char pid[24];
  const int n = std::snprintf(pid, sizeof pid, "%d", getpid());
  const bool ok = write(fd, pid, n) == n;
  const int saved = errno;
  close(fd);
  errno = saved;
  return ok;
}

}  // namespace ddl::cluster
