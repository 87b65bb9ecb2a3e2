// The link use check (see link_check.h).
//
// Note [Link bound]
// ddlrun --hosts shapes each host's link with tc's token bucket filter (tc-tbf(8)): in
// any interval of T seconds at most burst + rate·T bytes leave a port, where the bucket
// holds max(64 KiB, 4 ms at the rate) (docs/cluster.md). Between its phases a rank idles
// (waiting for a peer) and the bucket refills, so every phase may start with a full
// bucket; the labs' strategies have at most 2N phases per step (gather then scatter,
// N-1 ring steps each way). With B bytes a step in the busier direction the loop takes
// at least steps·(B - 2N·burst)/rate. We grade only when B >= 16N·burst, where that is
// at least 7/8 of B/rate, and ask for 3/4 of it: a margin no scheduling noise closes,
// since noise only makes a run slower. An upper bound (is the link used well?) is not
// graded: on shared cores CPU contention, TCP slow start and other jobs stretch the time
// by tens of percent, and gather-scatter needs 2·B/rate by design (rank 0 receives
// everything before it sends). The output gives the ratio for discussion.
#include "apps/grade/link_check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include <ddl/base/error.h>

namespace ddl::grade {

double link_rate_bytes_per_s(const std::string& spec) {
  const std::string rate = spec.substr(0, spec.find(','));
  size_t digits = 0;
  while (digits < rate.size() && (std::isdigit(static_cast<unsigned char>(rate[digits])) || rate[digits] == '.'))
    ++digits;
  const std::string unit = rate.substr(digits);
  double scale = 0;
  if (unit == "bit") scale = 1;
  if (unit == "kbit") scale = 1e3;
  if (unit == "mbit") scale = 1e6;
  if (unit == "gbit") scale = 1e9;
  double value = 0;
  try {
    value = digits > 0 ? std::stod(rate.substr(0, digits)) : 0;
  } catch (const std::exception&) {
    value = 0;
  }
  DDL_CHECK(scale > 0 && value > 0, "ddl-grade: --link ", spec,
            ": give a rate in tc's units, a number followed by bit, kbit, mbit or gbit (e.g. 100mbit)");
  return value * scale / 8;
}

Check check_link(const Case& c, const std::vector<RankTraffic>& traffic, const std::vector<double>& loop_seconds,
                 const std::string& link, Check k) {
  const double rate = link_rate_bytes_per_s(link);
  const double burst = std::max(65536.0, rate * 0.004);  // See Note [Link bound]
  const double floor_bytes = 16.0 * c.ranks * burst;
  std::ostringstream out;
  out.precision(3);
  int graded = 0;
  double busiest = 0, busiest_use = 0;  // the graded rank with the most bytes, and its link use
  for (size_t r = 0; r < traffic.size() && r < loop_seconds.size(); ++r) {
    const double bytes = static_cast<double>(std::max(traffic[r].sent, traffic[r].received));
    if (bytes / c.steps < floor_bytes) continue;
    ++graded;
    const double at_rate = bytes / rate, took = loop_seconds[r];
    if (bytes > busiest) busiest = bytes, busiest_use = at_rate / std::max(took, 1e-9);
    if (took < 0.75 * at_rate) {
      out << "rank " << r << " moved " << bytes / 1e6 << " MB in " << took << " s, but at " << link << " that takes "
          << at_rate << " s (3/4 of it, " << 0.75 * at_rate
          << " s, is the bound): the traffic did not cross the shaped link (is ddlrun given --link?)";
      k.output = out.str();
      return k;
    }
  }
  k.score = 1;
  if (graded == 0) {
    out << "not graded: no rank moves 16*N token-bucket bursts (" << floor_bytes / 1e6
        << " MB) per step, so its time says little about the link; a hidden case with a larger model grades it";
  } else {
    out << graded << " rank" << (graded == 1 ? "" : "s") << " took at least 3/4 of bytes/rate at " << link
        << "; the busiest used the link at " << std::lround(100 * busiest_use)
        << "% of its rate (not graded: shared cores stretch the time)";
  }
  k.output = out.str();
  return k;
}

}  // namespace ddl::grade
