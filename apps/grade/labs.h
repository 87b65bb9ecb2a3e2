// The labs ddl-grade knows: for each, the strategy name the handout asks students to
// register, the tolerance against one process, and the lab's formula for the bytes each
// rank sends (docs/labs/README.md). The table is the grader's; the handouts in labs/
// state the same numbers in words. It runs nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddl::grade {

struct Case;  // grade_case.h

// What one rank did in one run: bytes by the ProcessGroup's counters, after the
// strategy's constructor (its initial broadcast is not graded).
struct RankTraffic {
  int64_t sent = 0, received = 0;
  std::string other_ops;  // "all_reduce: 3 calls, ..." for every kind but send/recv; "" when none
  // Lab ddp-buckets: what one all_reduce of each of the handout's buckets cost on this
  // rank's group, measured after training (its transport decides the exact bytes).
  int64_t bucket_sent = 0, bucket_received = 0;
};

struct Lab {
  std::string id;        // --lab
  std::string folder;    // labs/<folder>/ holds its handout and reference
  std::string title;     // one line
  std::string strategy;  // the name students register (--strategy's default)
  double tolerance;      // max relative difference to one process on the whole batch
  bool p2p_only;         // the lab asks for send/recv only
  std::string formula;   // the bytes each rank sends per step, in words
};

const std::vector<Lab>& labs();
// The lab called `id`; throws a ddl::Error listing the labs when none is.
const Lab& find_lab(const std::string& id);
// The spec the ranks build `strategy` from: for ddp-buckets "NAME:CAP" with the case's
// bucket cap, unless `strategy` already holds an argument; else `strategy` itself.
std::string strategy_spec(const Lab& lab, const std::string& strategy, const Case& c);

// "" when rank `rank` of `world` moved the bytes `lab` prescribes for `steps` steps of a
// `payload` bytes gradient; else why not, in words.
std::string check_bytes(const Lab& lab, int rank, int world, int64_t payload, int64_t steps,
                        const std::vector<RankTraffic>& all);

}  // namespace ddl::grade
