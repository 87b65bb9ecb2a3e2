// State files and removal of an emulated job's resources (see state.h): namespaces
// (ip-netns(8): deleting a namespace that no process holds destroys its veths and qdiscs)
// and cgroup directories (cgroups(7): removable with rmdir once no process is inside).
#include <dirent.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <ddl/cluster/command.h>
#include <ddl/cluster/state.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::cluster {

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

std::string state_root() {
  const char* dir = std::getenv("DDLRUN_STATE_DIR");
  return dir && *dir ? dir : kStateRoot;
}

namespace {
// The whole record, written through an AtomicFile: fsynced, then renamed over the old one,
// so --cleanup reads the previous record or this one, never a torn one.
void write_record(const std::string& dir, const std::vector<Resource>& resources) {
  std::string text = "launcher " + std::to_string(getpid()) + " " + std::to_string(process_start_time(getpid())) + "\n";
  for (const Resource& r : resources) text += r.kind + " " + r.name + "\n";
  try {
    files::write_atomically(dir + "/state", text, "ddlrun", 0644);
  } catch (const std::exception& e) {
    throw SetupError(std::string("cannot write the record --cleanup needs, so nothing more is made: ") + e.what());
  }
}
}  // namespace

StateFile::StateFile(const std::string& job) : dir_(state_root() + "/" + job) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw SetupError("cannot create " + dir_ + " (the record --cleanup needs): " + ec.message());
  try {
    write_record(dir_, resources_);
  } catch (...) {
    fs::remove_all(dir_, ec);  // nothing was made yet
    throw;
  }
}

void StateFile::record(const Resource& r) {
  std::vector<Resource> next = resources_;
  next.push_back(r);
  write_record(dir_, next);
  resources_ = std::move(next);
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

namespace {
// "ddl<pid>-<4 hex digits>", as make_job_id writes it: only such names sweep <job>-* namespaces.
bool is_job_id(const std::string& job) {
  const size_t dash = job.find('-');
  if (job.rfind("ddl", 0) != 0 || dash == std::string::npos || dash == 3 || job.size() != dash + 5) return false;
  for (size_t i = 3; i < dash; ++i)
    if (!std::isdigit(static_cast<unsigned char>(job[i]))) return false;
  for (size_t i = dash + 1; i < job.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(job[i]))) return false;
  return true;
}

// The namespaces named after `job` that `resources` does not name: made by a launcher whose
// record was lost (one from before records were written whole, or whose disk filled up).
void add_unrecorded_namespaces(const std::string& job, std::vector<Resource>& resources) {
  if (!is_job_id(job)) return;
  std::error_code ec;
  for (fs::directory_iterator it("/run/netns", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    bool known = false;
    for (const Resource& r : resources) known = known || (r.kind == "netns" && r.name == name);
    if (name.rfind(job + "-", 0) == 0 && !known) resources.push_back({"netns", name});
  }
}

bool older_than(const fs::path& p, std::chrono::seconds age) {
  std::error_code ec;
  const auto t = fs::last_write_time(p, ec);
  return !ec && fs::file_time_type::clock::now() - t >= age;
}
}  // namespace

int cleanup_stale() {
  int rc = 0, removed = 0;
  std::error_code ec;
  const std::string root = state_root();
  if (!fs::exists(root, ec)) {
    std::printf("ddlrun --cleanup: nothing to do (%s does not exist)\n", root.c_str());
    return 0;
  }
  for (const auto& job : fs::directory_iterator(root, ec)) {
    const fs::path state = job.path() / "state";
    const std::string id = job.path().filename().string();
    std::ifstream f(state);
    std::string kind, name;
    int pid = 0;
    unsigned long long start = 0;
    std::vector<Resource> resources;
    std::error_code size_ec;
    const bool blank = !fs::exists(state, size_ec) || fs::file_size(state, size_ec) == 0;
    if (blank) {
      // A record is written whole before anything is made, so an empty or missing one
      // recorded nothing; a minute's age tells it from a launcher creating its folder now.
      if (!older_than(job.path(), std::chrono::seconds(60)) ||
          (fs::exists(state) && !older_than(state, std::chrono::seconds(60)))) {
        std::printf(
            "ddlrun --cleanup: %s has an empty state file less than a minute old (a launcher starting?); "
            "left alone\n",
            job.path().c_str());
        continue;
      }
    } else if (!(f >> kind >> pid >> start) || kind != "launcher") {
      std::printf("ddlrun --cleanup: %s has no readable state file; left alone\n", job.path().c_str());
      continue;
    } else if (process_start_time(pid) == start && start != 0) {
      std::printf("ddlrun --cleanup: job %s is live (launcher pid %d); left alone\n", id.c_str(), pid);
      continue;
    }
    while (!blank && f >> kind >> name) resources.push_back({kind, name});
    add_unrecorded_namespaces(id, resources);
    const std::vector<std::string> problems = remove_resources(resources);
    for (const std::string& p : problems) std::fprintf(stderr, "ddlrun --cleanup: %s\n", p.c_str());
    if (!problems.empty()) {  // keep the record, so another --cleanup can finish the job
      std::fprintf(stderr, "ddlrun --cleanup: kept %s for another try\n", job.path().c_str());
      rc = 1;
      continue;
    }
    for (const Resource& r : resources)
      std::printf("ddlrun --cleanup: removed %s %s\n", r.kind.c_str(), r.name.c_str());
    if (blank) std::printf("ddlrun --cleanup: removed %s (its state file was empty)\n", job.path().c_str());
    fs::remove_all(job.path(), ec);
    ++removed;
  }
  std::printf("ddlrun --cleanup: %d stale job%s removed\n", removed, removed == 1 ? "" : "s");
  return rc;
}

}  // namespace ddl::cluster
