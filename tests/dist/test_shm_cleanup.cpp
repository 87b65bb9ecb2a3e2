// Shared-memory segments of groups whose every rank was killed during set-up (Note [Segment
// names] in dist/transport/shm_segment.cpp), with real processes: ddlrun workers paused in
// that window (DDL_TEST_SHM_PAUSE_AFTER_CREATE, test-only) are all killed with SIGKILL, then
// /dev/shm is checked after ddlrun exits, after the next job on the host, and after
// `ddlrun --cleanup`, which must leave a live creator's segment alone.
// DDLRUN and DDL_TEST_HELPERS are set by apps/meson.build.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <ddl/dist/transport/shm_segment.h>

using Catch::Contains;
using dist_name = ddl::dist::detail::ShmSegmentName;
namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}
std::string ddlrun() { return env_or("DDLRUN", "ddlrun"); }
std::string helper(const std::string& name) { return env_or("DDL_TEST_HELPERS", ".") + "/ddl_helper_" + name; }

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<int> children_of(int pid) {
  std::vector<int> out;
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
  for (int c; in >> c;) out.push_back(c);
  return out;
}

// A job under ddlrun (its output in `log`), 2 ranks; rank 0 pauses once it has created the
// segment when `pause`.
struct Job {
  pid_t pid = -1;
  std::string log;
  Job(const std::string& log_path, bool pause) : log(log_path) {
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (pause) setenv("DDL_TEST_SHM_PAUSE_AFTER_CREATE", "1", 1);
      const std::string cmd =
          "exec " + ddlrun() + " --nproc 2 --grace 1 --timeout 60 " + helper("allreduce_rank") + " > " + log + " 2>&1";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  // ddlrun's exit status (128 + signal when killed), waiting at most `limit`.
  int wait_exit(std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > end) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        FAIL("ddlrun did not exit within the limit; its output:\n" << slurp(log));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

// The /dev/shm name of the segment a paused rank 0 of `job` created (waits for its line).
std::string paused_segment(const Job& job) {
  const std::string marker = "paused after creating /dev/shm/";
  for (int i = 0; i < 400; ++i) {
    const std::string out = slurp(job.log);
    if (const size_t at = out.find(marker); at != std::string::npos) {
      const size_t begin = at + marker.size();
      return out.substr(begin, out.find_first_of("\r\n", begin) - begin);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("rank 0 never paused after creating the segment; ddlrun's output:\n" << slurp(job.log));
  return "";
}

bool in_dev_shm(const std::string& name) { return fs::exists("/dev/shm/" + name); }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Kills every worker of `job` (and then ddlrun too when `launcher`) with SIGKILL.
void kill_ranks(const Job& job, bool launcher) {
  const std::vector<int> workers = children_of(job.pid);
  REQUIRE(workers.size() == 2);
  if (launcher) kill(job.pid, SIGKILL);
  for (int w : workers) kill(w, SIGKILL);
  for (int w : workers)  // gone, not just signalled (ddlrun reaps them; here they are not ours)
    for (int i = 0; i < 200 && fs::exists("/proc/" + std::to_string(w)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
}

// A segment every rank was killed with: ddlrun itself killed first, so nobody removes it.
// Any group set up on this host meanwhile (other tests run in parallel) rightly removes it
// too: then the kill is repeated, up to 5 times.
std::string leave_stale_segment(const std::string& dir) {
  for (int round = 0; round < 5; ++round) {
    static int jobs = 0;  // a log of its own each time: an old one names an old segment
    Job job(dir + "/stale" + std::to_string(jobs++) + ".log", true);
    const std::string name = paused_segment(job);
    REQUIRE(in_dev_shm(name));
    kill_ranks(job, /*launcher=*/true);
    CHECK(job.wait_exit(std::chrono::seconds(10)) == 128 + SIGKILL);
    dist_name n;
    REQUIRE(ddl::dist::detail::parse_shm_segment_name(name, &n));
    REQUIRE(ddl::dist::detail::shm_creator_dead(n));
    if (in_dev_shm(name)) return name;  // the leak this is about
  }
  FAIL("the killed job's segment was removed by another group's sweep 5 times in a row");
  return "";
}

struct ScratchDir {
  std::string path = fs::temp_directory_path() / ("ddl-shm-cleanup-" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("shm names: who made a segment, for which run, and whether it is gone", "[dist]") {
  using namespace ddl::dist::detail;
  setenv("DDL_RUN_ID", "job-7/x", 1);
  const std::string mine = shm_segment_name(0xabcdef);
  unsetenv("DDL_RUN_ID");
  ShmSegmentName n;
  REQUIRE(parse_shm_segment_name(mine, &n));
  CHECK(n.pid == getpid());
  CHECK(n.start_time == read_proc_stat(getpid()).start_time);
  CHECK(n.run_id == "job_7_x");  // '-' is the separator, '/' cannot be in a name
  CHECK_FALSE(shm_creator_dead(n));
  n.start_time += 1;  // the same pid, another process: gone
  CHECK(shm_creator_dead(n));
  // A child that has exited and been reaped is gone.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  REQUIRE(parse_shm_segment_name("ddl-shm-" + std::to_string(child) + "-1f2e", &n));  // the older form
  CHECK(n.start_time == 0);
  CHECK(shm_creator_dead(n));
  CHECK_FALSE(parse_shm_segment_name("ddl-shm-x-1-2", &n));
  CHECK_FALSE(parse_shm_segment_name("ddl-fuzz-12-34", &n));
  CHECK_FALSE(parse_shm_segment_name("ddl-shm-12-34-zz", &n));
}

TEST_CASE("shm cleanup: every rank killed during set-up, ddlrun removes the segment when the job ends", "[dist]") {
  ScratchDir dir;
  Job job(dir.path + "/job.log", true);
  const std::string name = paused_segment(job);
  REQUIRE(in_dev_shm(name));
  kill_ranks(job, /*launcher=*/false);
  const int code = job.wait_exit(std::chrono::seconds(30));
  const std::string out = slurp(job.log);
  INFO(out);
  CHECK(code == 128 + SIGKILL);  // the failing worker's signal
  CHECK_FALSE(in_dev_shm(name));
  CHECK_THAT(out, Contains("removed what the ranks left in /dev/shm: /dev/shm/" + name));
}

TEST_CASE("shm cleanup: under a launcher that removes nothing, the next job on the host does", "[dist]") {
  ScratchDir dir;
  const std::string stale = leave_stale_segment(dir.path);
  Job next(dir.path + "/next.log", false);
  const int code = next.wait_exit(std::chrono::seconds(60));
  const std::string out = slurp(next.log);
  INFO(out);
  REQUIRE(code == 0);
  CHECK_THAT(out, Contains("sum ok"));
  CHECK_FALSE(in_dev_shm(stale));
}

TEST_CASE("shm cleanup: ddlrun --cleanup removes dead creators' segments, not a live one's", "[dist]") {
  ScratchDir dir;
  // A segment this (live) process made, as a group in set-up would have it.
  const std::string live = ddl::dist::detail::shm_segment_name(0x1234);
  const int fd = shm_open(("/" + live).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  close(fd);
  // Another group's sweep may remove the stale segment first: then try again (5 times).
  bool removed_by_cleanup = false;
  for (int round = 0; round < 5 && !removed_by_cleanup; ++round) {
    const std::string stale = leave_stale_segment(dir.path);
    FILE* p = popen((ddlrun() + " --cleanup 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = pclose(p);
    INFO(out);
    CHECK(WIFEXITED(status));
    CHECK_FALSE(in_dev_shm(stale));
    removed_by_cleanup = contains(out, "removed /dev/shm/" + stale + " (its creator is gone)");
  }
  CHECK(removed_by_cleanup);
  CHECK(in_dev_shm(live));
  shm_unlink(("/" + live).c_str());
}
