// State files and removal of an emulated job's resources (see state.h): namespaces
// (ip-netns(8): deleting a namespace that no process holds destroys its veths and qdiscs)
// and cgroup directories (cgroups(7): removable with rmdir once no process is inside).
#include "apps/ddlrun/hosts/state.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "apps/ddlrun/hosts/command.h"

namespace ddl::launcher::hosts {

namespace fs = std::filesystem;

unsigned long long process_start_time(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return 0;
  const size_t paren = line.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream rest(line.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) return std::stoull(field);
  return 0;
}

StateFile::StateFile(const std::string& job) : dir_(std::string(kStateRoot) + "/" + job) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  std::ofstream f(dir_ + "/state");
  f << "launcher " << getpid() << " " << process_start_time(getpid()) << "\n";
  if (!f.flush()) throw SetupError("cannot write " + dir_ + "/state (the record --cleanup needs): " + ec.message());
}

void StateFile::record(const Resource& r) {
  resources_.push_back(r);
  std::ofstream f(dir_ + "/state", std::ios::app);
  f << r.kind << " " << r.name << "\n";
}

void StateFile::remove() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

namespace {

void kill_pids(const std::vector<int>& pids) {
  for (int p : pids)
    if (p > 1 && p != getpid()) kill(p, SIGKILL);
}

std::vector<int> netns_pids(const std::string& ns) {
  std::vector<int> pids;
  std::istringstream in(run_command({"ip", "netns", "pids", ns}).output);
  for (int p; in >> p;) pids.push_back(p);
  return pids;
}

std::vector<int> cgroup_pids(const std::string& dir) {
  std::vector<int> pids;
  std::ifstream in(dir + "/cgroup.procs");
  for (int p; in >> p;) pids.push_back(p);
  return pids;
}

bool netns_exists(const std::string& ns) { return fs::exists("/run/netns/" + ns); }

// Waits up to two seconds for `done`.
template <class F>
bool settle(F done) {
  for (int i = 0; i < 200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace

std::vector<std::string> remove_resources(const std::vector<Resource>& resources) {
  std::vector<std::string> problems;
  for (const Resource& r : resources)  // every process first: workers, holders
    if (r.kind == "netns" && netns_exists(r.name)) kill_pids(netns_pids(r.name));
  for (auto it = resources.rbegin(); it != resources.rend(); ++it) {
    const Resource& r = *it;
    if (r.kind == "netns") {
      if (!netns_exists(r.name)) continue;
      settle([&] { return netns_pids(r.name).empty(); });
      CommandResult c = run_command({"ip", "netns", "del", r.name});
      if (c.status != 0) problems.push_back("`ip netns del " + r.name + "` failed: " + c.output);
    } else if (r.kind == "cgroup") {
      std::error_code ec;
      if (!fs::exists(r.name, ec)) continue;
      // Children first (the job's folder holds one per host). Never throws: this runs in
      // destructors and concurrent clean-ups may remove folders under the iterator.
      std::vector<std::string> dirs{r.name};
      for (fs::recursive_directory_iterator it(r.name, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec)) dirs.push_back(it->path());
      for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) {
        kill_pids(cgroup_pids(*d));
        if (!settle([&] { return rmdir(d->c_str()) == 0 || errno == ENOENT; }))
          problems.push_back("cannot remove cgroup " + *d + ": " + std::strerror(errno));
      }
    }
  }
  return problems;
}

int cleanup_stale() {
  int rc = 0, removed = 0;
  std::error_code ec;
  if (!fs::exists(kStateRoot, ec)) {
    std::printf("ddlrun --cleanup: nothing to do (%s does not exist)\n", kStateRoot);
    return 0;
  }
  for (const auto& job : fs::directory_iterator(kStateRoot, ec)) {
    std::ifstream f(job.path() / "state");
    std::string kind, name;
    int pid = 0;
    unsigned long long start = 0;
    std::vector<Resource> resources;
    if (!(f >> kind >> pid >> start) || kind != "launcher") {
      std::printf("ddlrun --cleanup: %s has no readable state file; left alone\n", job.path().c_str());
      continue;
    }
    if (process_start_time(pid) == start && start != 0) {
      std::printf("ddlrun --cleanup: job %s is live (launcher pid %d); left alone\n", job.path().filename().c_str(),
                  pid);
      continue;
    }
    while (f >> kind >> name) resources.push_back({kind, name});
    const std::vector<std::string> problems = remove_resources(resources);
    for (const std::string& p : problems) std::fprintf(stderr, "ddlrun --cleanup: %s\n", p.c_str());
    if (!problems.empty()) {  // keep the record, so another --cleanup can finish the job
      std::fprintf(stderr, "ddlrun --cleanup: kept %s for another try\n", job.path().c_str());
      rc = 1;
      continue;
    }
    for (const Resource& r : resources)
      std::printf("ddlrun --cleanup: removed %s %s\n", r.kind.c_str(), r.name.c_str());
    fs::remove_all(job.path(), ec);
    ++removed;
  }
  std::printf("ddlrun --cleanup: %d stale job%s removed\n", removed, removed == 1 ? "" : "s");
  return rc;
}

}  // namespace ddl::launcher::hosts
