// Multi-rank test harness: run a function as `world` ranks, either as threads of this
// process (fast; stores shared in memory) or as processes (real TCP, real deaths).
// Ranks report failures by throwing (DIST_EXPECT); the parent sees every rank's error.
// A process run always ends within its deadline: late ranks are SIGKILLed and reported.
// Process ranks re-execute the test program (see Note [Ranks re-execute the test]).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ddl/base/error.h>

// Checks inside a rank: throws so the harness reports rank, file and line.
#define DIST_EXPECT(cond, ...)                                                                     \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw std::runtime_error(                                                                    \
          ::ddl::detail::str_cat(__FILE__, ":", __LINE__, ": ", #cond, " failed. ", __VA_ARGS__)); \
  } while (0)

namespace ddl::test {

struct RankOutcome {
  bool ok = true;
  std::string error;   // the exception message, "killed by signal 9", "timed out", ...
  double seconds = 0;  // wall time until this rank finished
};

// Runs fn(rank) on `world` threads and returns each rank's outcome.
inline std::vector<RankOutcome> run_threads(int world, const std::function<void(int)>& fn) {
  std::vector<RankOutcome> out(world);
  std::vector<std::thread> threads;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (const std::exception& e) {
        out[r] = {false, e.what()};
      }
      out[r].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  for (auto& t : threads) t.join();
  return out;
}

// Note [Ranks re-execute the test]
// run_processes forks and at once execs this test program again (/proc/self/exe), with
// the current test case's name and section path as its Catch2 filter and the variable
// DDL_TEST_RANK_PROCESS="rank call errfd". Forking alone would leave a child of a parent
// with running threads (a store server's) in whatever locks those threads held: Clang
// 14's ASan allocator is one (fixed in LLVM 18, llvm-project PR 75290), and
// ThreadSanitizer cannot follow such a child at all. The rank process runs the test case
// from its start, as the parent did; its run_processes calls before number `call` return
// all-ok outcomes at once without running anything, and call number `call` runs fn(rank)
// and exits: 0, or 1 with the error text written to errfd (a pipe the parent reads).
// So everything before the call runs twice, in the parent and in every rank:
//  - what must happen once (a store server, a temporary directory, a free port) goes
//    through from_parent() or ParentStoreServer (dist_fixtures.h);
//  - code after a run_processes call that is not the last of its test case also runs in
//    the ranks of later calls, with all-ok outcomes: guard it with is_rank_process();
//  - SECTIONs and DYNAMIC_SECTIONs are followed (Catch2's -c filter); GENERATE is not
//    (Catch2 2.x cannot be told a generator's value): loop over DYNAMIC_SECTIONs instead.

// True in a rank process that run_processes started.
bool is_rank_process();

// In the test process: make(), remembered under `name` for the ranks of this test case's
// later run_processes calls. In a rank process: the test process's value, as it was when
// that rank's call started (make is not called).
std::string from_parent(const std::string& name, const std::function<std::string()>& make);

// Runs fn(rank) in `world` processes (Note [Ranks re-execute the test]). Ranks that are
// still running after `deadline_s` seconds are killed and reported as timed out.
// Only in a Catch2 test case, never from a rank or a thread other than the test's.
std::vector<RankOutcome> run_processes(int world, const std::function<void(int)>& fn, double deadline_s = 60);

// "rank 0: ok; rank 1: <error>" for REQUIRE messages.
inline std::string describe(const std::vector<RankOutcome>& outs) {
  std::string s;
  for (size_t r = 0; r < outs.size(); ++r)
    s += "\nrank " + std::to_string(r) + ": " + (outs[r].ok ? "ok" : outs[r].error);
  return s;
}

inline bool all_ok(const std::vector<RankOutcome>& outs) {
  for (const auto& o : outs)
    if (!o.ok) return false;
  return true;
}

}  // namespace ddl::test
