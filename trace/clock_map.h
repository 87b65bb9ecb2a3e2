// Placing one process's trace clock on a reference clock (rank 0's) from offset estimates:
// two estimates, one before the trace and one after, give a line (offset and drift) that
// every timestamp is mapped through; one estimate gives a constant offset. How the
// estimates are made is dist/trace_merge.h's business; this is the arithmetic.
#pragma once

#include <cstdint>

namespace ddl::trace {

// This clock minus the reference clock, measured around local time at_ns: the true offset
// then lay within offset_ns ± error_ns.
struct ClockEstimate {
  int64_t offset_ns = 0;
  int64_t error_ns = 0;
  int64_t at_ns = 0;  // this clock, when the estimate holds
  int rounds = 0;     // exchanges made
};

// offset(t) = offset_ns + drift * (t - at_ns); reference time = t - offset(t).
struct ClockMap {
  int64_t offset_ns = 0;
  int64_t at_ns = 0;
  double drift = 0;      // d offset / dt (1e-6 = 1 ppm)
  int64_t error_ns = 0;  // bound on a mapped time's error between the estimates
  int estimates = 0;     // 0: the reference itself, 1: constant offset, 2: interpolated
  ClockEstimate first, last;

  // Never decreasing in t (|drift| < 1), so mapped spans keep their nesting.
  int64_t to_reference(int64_t t) const;
};

// A constant offset: the bound holds at the estimate only (drift is not accounted for).
ClockMap clock_map(const ClockEstimate& only);
// The line through both estimates (first.at_ns < last.at_ns). If the drift is constant
// between them, every time in between is off by at most max(first, last error).
ClockMap clock_map(const ClockEstimate& first, const ClockEstimate& last);

}  // namespace ddl::trace
