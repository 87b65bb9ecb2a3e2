// Shared helpers of the bench programs: --threads parsing and median timing.
// `--clock cpu` (any bench) times with the process's CPU clock instead of the
// wall clock: with --threads 1 on a busy shared machine it still measures the
// work itself, not the time other processes held the core.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace ddl::bench {

inline bool& use_cpu_clock() {
  static bool cpu = false;
  return cpu;
}

// Reads --clock wall|cpu; call once from main.
inline void clock_arg(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--clock")) use_cpu_clock() = !std::strcmp(argv[i + 1], "cpu");
}

inline double now_seconds() {
  if (!use_cpu_clock())
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

inline int threads_arg(int argc, char** argv, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--threads")) return std::atoi(argv[i + 1]);
  return fallback;
}

// Median time in seconds (wall, or CPU with --clock cpu) of `reps` calls of fn after one warm-up call.
template <typename Fn>
double median_seconds(int reps, const Fn& fn) {
  fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double start = now_seconds();
    fn();
    t.push_back(now_seconds() - start);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace ddl::bench
