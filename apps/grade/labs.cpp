// The lab table and its byte formulas (see labs.h). M is one step's gradient in bytes,
// N the number of ranks.
#include "apps/grade/labs.h"

#include "apps/grade/grade_case.h"
#include <ddl/base/error.h>

namespace ddl::grade {

const std::vector<Lab>& labs() {
  static const std::vector<Lab> all = {
      {"p2p-gather-scatter", "p2p", "CS744 A2 part 2a: gather to rank 0, average, scatter back, on send/recv",
       "student-gather-scatter", 1e-5, true, "rank 0 sends and receives (N-1)*M, every other rank M"},
      {"p2p-allreduce", "p2p", "CS744 A2 part 2b: every rank sends its gradient to every other rank",
       "student-allreduce", 1e-5, true, "every rank sends and receives (N-1)*M"},
      {"ring", "ring", "ring all-reduce of N chunks (reduce-scatter, then all-gather)", "student-ring", 1e-5, true,
       "2(N-1)*M in all, each rank sends and receives between 2(N-1)*floor(M/N) and 2(N-1)*ceil(M/N) (in "
       "whole floats)"},
      {"fault", "fault", "kill a rank, restart the group, resume from the newest checkpoint every rank holds",
       "student-checkpoint", 1e-5, false, "not graded in this lab"},
      {"ddp-buckets", "ddp", "CS744 A2 part 3: DDP, gradient buckets all-reduced while backward runs", "student-ddp",
       1e-5, false,
       "every rank sends and receives what the process group's all_reduce of each of the handout's buckets "
       "costs, about 2(N-1)/N of the bucket each way (dist/traffic.cpp, or the shared-memory path's "
       "count); measured on the same group"},
      {"param-server", "ps", "parameter server: push gradients to rank 0, which steps and sends the weights back",
       "student-param-server", 1e-5, true, "workers send M and receive M, rank 0 sends and receives (N-1)*M"},
      {"shm-allreduce", "os", "average gradients through POSIX shared memory between the ranks of one host",
       "student-shm", 1e-5, false, "0: the gradients go through shared memory, no ProcessGroup call in a step"},
  };
  return all;
}

const Lab& find_lab(const std::string& id) {
  std::string known;
  for (const auto& lab : labs()) {
    if (lab.id == id) return lab;
    known += (known.empty() ? "" : ", ") + lab.id;
  }
  DDL_CHECK(false, "ddl-grade: no lab called '", id, "'; the labs are ", known);
  return labs().front();  // not reached
}

std::string strategy_spec(const Lab& lab, const std::string& strategy, const Case& c) {
  if (lab.id != "ddp-buckets" || strategy.find(':') != std::string::npos) return strategy;
  return strategy + ":" + std::to_string(c.cap);
}

namespace {
std::string expect_range(const char* what, int64_t got, int64_t low, int64_t high, int64_t steps) {
  if (got >= low && got <= high) return "";
  const std::string want = low == high ? std::to_string(low / steps) + " bytes"
                                       : std::to_string(low / steps) + " to " + std::to_string(high / steps) + " bytes";
  return std::string(what) + " " + std::to_string(got / steps) + " bytes per step, the lab's formula gives " + want;
}
}  // namespace

std::string check_bytes(const Lab& lab, int rank, int world, int64_t payload, int64_t steps,
                        const std::vector<RankTraffic>& all) {
  const RankTraffic& t = all[rank];
  const int64_t n = world, m = payload * steps;
  std::string why;
  if (lab.id == "p2p-gather-scatter" || lab.id == "param-server") {  // both through rank 0
    const int64_t want = rank == 0 ? (n - 1) * m : m;
    why = expect_range("sent", t.sent, want, want, steps);
    if (why.empty()) why = expect_range("received", t.received, want, want, steps);
  } else if (lab.id == "p2p-allreduce") {
    why = expect_range("sent", t.sent, (n - 1) * m, (n - 1) * m, steps);
    if (why.empty()) why = expect_range("received", t.received, (n - 1) * m, (n - 1) * m, steps);
  } else if (lab.id == "ddp-buckets") {
    why = expect_range("sent", t.sent, t.bucket_sent * steps, t.bucket_sent * steps, steps);
    if (why.empty())
      why = expect_range("received", t.received, t.bucket_received * steps, t.bucket_received * steps, steps);
  } else if (lab.id == "shm-allreduce") {
    why = expect_range("sent", t.sent, 0, 0, steps);
    if (why.empty()) why = expect_range("received", t.received, 0, 0, steps);
    if (why.empty() && !t.other_ops.empty()) why = "called " + t.other_ops + " in its steps";
  } else {  // ring: chunks of whole floats
    const int64_t floats = payload / 4, low = 2 * (n - 1) * (floats / n) * 4 * steps,
                  high = 2 * (n - 1) * ((floats + n - 1) / n) * 4 * steps;
    why = expect_range("sent", t.sent, low, high, steps);
    if (why.empty()) why = expect_range("received", t.received, low, high, steps);
    if (why.empty() && rank == 0) {
      int64_t total = 0;
      for (const auto& r : all) total += r.sent;
      if (total != 2 * (n - 1) * m)
        why = "all ranks together sent " + std::to_string(total / steps) + " bytes per step, 2(N-1)*M is " +
              std::to_string(2 * (n - 1) * payload);
    }
  }
  if (!why.empty()) why += " (" + lab.formula + "; M = " + std::to_string(payload) + ", N = " + std::to_string(n) + ")";
  return why;
}

}  // namespace ddl::grade
