// The linear clock map of clock_map.h. Drift is a double (a 100 ppm slope over hours needs
// more than int64 for the product), rounded once per timestamp.
#include <algorithm>
#include <cmath>

#include <ddl/trace/clock_map.h>

namespace ddl::trace {

int64_t ClockMap::to_reference(int64_t t) const {
  return t - offset_ns - std::llround(drift * static_cast<double>(t - at_ns));
}

ClockMap clock_map(const ClockEstimate& only) {
  ClockMap m;
  m.offset_ns = only.offset_ns;
  m.at_ns = only.at_ns;
  m.error_ns = only.error_ns;
  m.estimates = 1;
  m.first = m.last = only;
  return m;
}

ClockMap clock_map(const ClockEstimate& first, const ClockEstimate& last) {
  if (last.at_ns <= first.at_ns) return clock_map(last);
  ClockMap m;
  m.offset_ns = first.offset_ns;
  m.at_ns = first.at_ns;
  m.drift = static_cast<double>(last.offset_ns - first.offset_ns) / static_cast<double>(last.at_ns - first.at_ns);
  m.error_ns = std::max(first.error_ns, last.error_ns);
  m.estimates = 2;
  m.first = first;
  m.last = last;
  return m;
}

}  // namespace ddl::trace
