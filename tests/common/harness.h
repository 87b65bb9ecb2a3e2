// Multi-rank test harness: run a function as `world` ranks, either as threads of this
// process (fast; stores shared in memory) or as forked processes (real TCP, real deaths).
// Ranks report failures by throwing (DIST_EXPECT); the parent sees every rank's error.
// A process run always ends within its deadline: late ranks are SIGKILLed and reported.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tensor/error.h"
#include "tensor/parallel.h"

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

// Runs fn(rank) in `world` forked processes. Ranks that are still running after
// `deadline_s` seconds are killed and reported as timed out.
inline std::vector<RankOutcome> run_processes(int world, const std::function<void(int)>& fn, double deadline_s = 60) {
  std::vector<RankOutcome> out(world);
  std::vector<pid_t> pids(world);
  std::vector<int> pipes(world);
  std::fflush(stdout);
  std::fflush(stderr);
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < world; ++r) {
    int p[2];
    if (pipe(p) != 0) throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      ddl::set_num_threads(1);  // no OpenMP pool in a forked child
      std::string err;
      try {
        fn(r);
      } catch (const std::exception& e) {
        err = e.what();
        if (err.empty()) err = "(empty error message)";
      }
      if (!err.empty()) [[maybe_unused]]
        auto n = write(p[1], err.data(), err.size());
      _exit(err.empty() ? 0 : 1);  // skip destructors and atexit: they belong to the parent
    }
    close(p[1]);
    pids[r] = pid;
    pipes[r] = p[0];
  }
  std::vector<bool> done(world, false);
  int remaining = world;
  while (remaining > 0) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int r = 0; r < world; ++r) {
      if (done[r]) continue;
      int status = 0;
      pid_t got = waitpid(pids[r], &status, WNOHANG);
      if (got == 0 && elapsed < deadline_s) continue;
      if (got == 0) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status, 0);
        out[r].ok = false;
        out[r].error = "timed out (killed by the harness after " + std::to_string(deadline_s) + " s)";
      } else if (WIFSIGNALED(status)) {
        out[r].ok = false;
        out[r].error = "killed by signal " + std::to_string(WTERMSIG(status));
      } else if (WEXITSTATUS(status) != 0) {
        out[r].ok = false;
      }
      char buf[8192];
      ssize_t n;
      while ((n = read(pipes[r], buf, sizeof buf)) > 0) out[r].error.append(buf, n);
      close(pipes[r]);
      if (!out[r].ok && out[r].error.empty()) out[r].error = "exit status " + std::to_string(WEXITSTATUS(status));
      out[r].seconds = elapsed;
      done[r] = true;
      --remaining;
    }
    if (remaining > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return out;
}

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
