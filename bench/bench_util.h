// Shared helpers of the bench programs: --threads parsing and median timing.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ddl::bench {

inline int threads_arg(int argc, char** argv, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--threads")) return std::atoi(argv[i + 1]);
  return fallback;
}

// Median wall time in seconds of `reps` calls of fn after one warm-up call.
template <typename Fn>
double median_seconds(int reps, const Fn& fn) {
  fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace ddl::bench
