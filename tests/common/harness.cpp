// Process ranks for the test harness (see Note [Ranks re-execute the test] in harness.h):
// a Catch2 listener that follows each pass of a test case (its open sections, its count of
// run_processes calls, the values from_parent shares), and run_processes itself: fork,
// exec this program as a rank, collect exit statuses and error texts, kill late ranks.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "tests/common/harness.h"

#include <fcntl.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include <ddl/tensor/core/parallel.h>

extern char** environ;

namespace ddl::test {
namespace {

constexpr const char* kRankVar = "DDL_TEST_RANK_PROCESS";  // "rank call errfd"
constexpr const char* kSharedPrefix = "DDL_TEST_SHARED_";

struct HarnessState {
  // This pass of the current test case, in the test process.
  int depth = 0;                      // sections open, the test case's own included
  std::vector<std::string> sections;  // names of the open sections below the test case
  int calls = 0;                      // run_processes calls so far in this pass
  std::map<std::string, std::string> shared;
  // In a rank process: which rank of which call, and where its error text goes.
  bool rank_process = false;
  int rank = -1, call = 0, error_fd = -1;
};

void never_reached_its_call();

HarnessState& state() {
  static HarnessState s = [] {
    HarnessState st;
    if (const char* v = std::getenv(kRankVar)) {
      st.rank_process = std::sscanf(v, "%d %d %d", &st.rank, &st.call, &st.error_fd) == 3;
      if (!st.rank_process) {
        std::fprintf(stderr, "harness: malformed %s='%s'\n", kRankVar, v);
        std::_Exit(2);
      }
      std::atexit(never_reached_its_call);  // its call ends the process with _exit instead
    }
    return st;
  }();
  return s;
}

std::string env_name(const std::string& name) {
  std::string n = kSharedPrefix;
  for (char c : name) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// A rank process ends here: its error text (if any) to the parent, then _exit, skipping
// destructors and atexit handlers of a test case that was left in the middle.
[[noreturn]] void end_rank(const std::string& error) {
  std::fflush(nullptr);
  if (!error.empty()) write_all(state().error_fd, error);
  _exit(error.empty() ? 0 : 1);
}

// A rank process that exits normally never ran its rank: say so, never report success
// (a filter that matched no test case would otherwise look like a passing rank).
void never_reached_its_call() {
  end_rank(detail::str_cat("rank process: this program ended without reaching run_processes call #", state().call,
                           " (did its test-name filter match no test case?)"));
}

// Catch2 test-name filter for `name`: backslash before the characters its parser treats
// specially, so the name matches itself only.
std::string escape_test_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (std::strchr("\\,[]\"~*", c)) out += '\\';
    out += c;
  }
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Read DDL_TEST_RANK_PROCESS when the program starts, before any test case may change
// the environment, and so that a rank process whose filter matches nothing is caught.
[[maybe_unused]] const bool state_read_at_start = (state(), true);

struct HarnessListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void sectionStarting(const Catch::SectionInfo& info) override {
    HarnessState& s = state();
    if (s.depth++ == 0) {  // the test case itself: a new pass begins
      s.sections.clear();
      s.calls = 0;
      s.shared.clear();
    } else {
      s.sections.push_back(trim(info.name));
    }
  }
  void sectionEnded(const Catch::SectionStats& stats) override {
    HarnessState& s = state();
    if (--s.depth > 0 && !s.sections.empty()) s.sections.pop_back();
    (void)stats;
  }
  // A rank process that got here never reached its call: the test case took another path.
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    const HarnessState& s = state();
    if (!s.rank_process) return;
    end_rank(detail::str_cat("rank process: test case '", stats.testInfo.name,
                             "' ended before its run_processes call #", s.call, " (", stats.totals.assertions.failed,
                             " failed assertions, printed above); a test case must make the same "
                             "run_processes calls in the same order in every run"));
  }
};
CATCH_REGISTER_LISTENER(HarnessListener)

}  // namespace

bool is_rank_process() { return state().rank_process; }

std::string from_parent(const std::string& name, const std::function<std::string()>& make) {
  HarnessState& s = state();
  if (s.rank_process) {
    const char* v = std::getenv(env_name(name).c_str());
    if (!v) throw std::runtime_error("from_parent: the test process passed no value '" + name + "' to this rank");
    return v;
  }
  return s.shared[name] = make();
}

std::vector<RankOutcome> run_processes(int world, const std::function<void(int)>& fn, double deadline_s) {
  HarnessState& s = state();
  if (s.depth == 0)
    throw std::logic_error("run_processes: called outside a Catch2 test case (or the harness listener is missing)");
  const int call = ++s.calls;
  if (s.rank_process) {
    if (call < s.call) return std::vector<RankOutcome>(world);  // an earlier call: ran in its own processes
    if (s.rank < 0 || s.rank >= world)
      end_rank(detail::str_cat("rank process: rank ", s.rank, " but call #", call, " runs ", world, " ranks"));
    unsetenv(kRankVar);       // programs this rank starts are no ranks of ours
    ddl::set_num_threads(1);  // ranks share the cores
    std::string err;
    try {
      fn(s.rank);
    } catch (const std::exception& e) {
      err = e.what();
      if (err.empty()) err = "(empty error message)";
    } catch (...) {  // a Catch2 REQUIRE inside a rank: its report is in the log above
      err = "an exception that is no std::exception (a Catch2 assertion? ranks use DIST_EXPECT)";
    }
    end_rank(err);
  }

  // Everything a child needs, prepared before fork: after it, only exec or _exit.
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) throw std::runtime_error("run_processes: readlink(/proc/self/exe) failed");
  exe[len] = '\0';
  std::vector<std::string> args = {exe, escape_test_name(Catch::getResultCapture().getCurrentTestName()), "--reporter",
                                   "compact"};
  for (const auto& sec : s.sections) args.insert(args.end(), {"-c", sec});
  if (Catch::rngSeed() != 0) args.insert(args.end(), {"--rng-seed", std::to_string(Catch::rngSeed())});
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "DDL_TEST_RANK_PROCESS=", 22) != 0 && std::strncmp(*e, kSharedPrefix, 16) != 0)
      env.emplace_back(*e);
  for (const auto& [name, value] : s.shared) env.push_back(env_name(name) + "=" + value);
  env.emplace_back();  // this rank's kRankVar, filled in per rank
  auto pointers = [](std::vector<std::string>& v) {
    std::vector<char*> p;
    for (auto& x : v) p.push_back(x.data());
    p.push_back(nullptr);
    return p;
  };
  std::vector<char*> argv = pointers(args);
  static const char kExecFailed[] = "run_processes: exec of the test program failed";

  std::vector<RankOutcome> out(world);
  std::vector<pid_t> pids(world, -1);
  std::vector<int> pipes(world, -1);
  std::fflush(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < world; ++r) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("run_processes: pipe failed");
    env.back() = detail::str_cat(kRankVar, "=", r, " ", call, " ", p[1]);
    std::vector<char*> envp = pointers(env);
    const pid_t pid = fork();
    if (pid == 0) {
      fcntl(p[1], F_SETFD, 0);  // the write end survives exec
      execve(exe, argv.data(), envp.data());
      [[maybe_unused]] auto n = write(p[1], kExecFailed, sizeof kExecFailed - 1);
      _exit(127);
    }
    close(p[1]);
    if (pid < 0) {
      close(p[0]);
      throw std::runtime_error("run_processes: fork failed");
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    pids[r] = pid;
    pipes[r] = p[0];
  }
  auto drain = [&](int r) {
    char buf[8192];
    ssize_t n;
    while ((n = read(pipes[r], buf, sizeof buf)) > 0) out[r].error.append(buf, n);
  };
  std::vector<bool> done(world, false);
  int remaining = world;
  while (remaining > 0) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int r = 0; r < world; ++r) {
      if (done[r]) continue;
      drain(r);  // a long error text must not block its writer
      int status = 0;
      const pid_t got = waitpid(pids[r], &status, WNOHANG);
      if (got == 0 && elapsed < deadline_s) continue;
      std::string why;
      if (got == 0) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status, 0);
        why = "timed out (killed by the harness after " + std::to_string(deadline_s) + " s)";
      } else if (WIFSIGNALED(status)) {
        why = "killed by signal " + std::to_string(WTERMSIG(status));
      } else if (WEXITSTATUS(status) != 0) {
        why = "exit status " + std::to_string(WEXITSTATUS(status));
      }
      drain(r);
      close(pipes[r]);
      out[r].ok = why.empty();
      // The rank's own text when it gave one and exited; the harness's reason otherwise.
      if (got == 0 || WIFSIGNALED(status))
        out[r].error = out[r].error.empty() ? why : why + "; it wrote: " + out[r].error;
      else if (out[r].error.empty())
        out[r].error = why;
      out[r].seconds = elapsed;
      done[r] = true;
      --remaining;
    }
    if (remaining > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return out;
}

}  // namespace ddl::test
