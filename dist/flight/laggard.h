// Naming the rank a timed-out collective waited for. Gloo's timeout says only that a
// transfer did not finish; it cannot tell a frozen peer from one that waits in another call.
// So a rank whose collective #S timed out publishes its position (last completed seq, the
// op at S, its host) in the group's store and reads the others' for a short while: a rank
// that reports a different op at S is a desync, one that does not report at all went silent
// (frozen, dead, cut off, or still busy before S). Only failing ranks pay for this.
#pragma once

#include <string>
#include <vector>

#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/store/store.h>

namespace ddl::dist::flight {

// One rank's report, as published ("" fields when it did not report).
struct Position {
  int rank = -1;
  bool reported = false;
  uint64_t last_completed = 0, at_seq = 0;
  std::string op, host;
};

struct Laggard {
  int rank = -1;        // the rank to blame, -1 when none stands out
  bool desync = false;  // it called a different collective at the same seq
  std::string message;  // "rank 2 on host h2 never arrived (ranks 0,1 waited 5.0 s)"
};

// Publishes this rank's own host name for the others' messages (called once per group).
void publish_host(GroupRecorder& rec);

// Publishes this rank's position only, on a thread of its own, without waiting: a rank whose
// collective failed otherwise (a peer closed its connections) still shows where it was to
// the ranks that time out.
void publish_position(GroupRecorder& rec, uint64_t seq, const std::string& op);

// Runs the exchange for collective `seq` (`op` as the recorder describes it), bounded by
// `wait` however the store behaves (a rank cut off from the store learns nothing), and
// records the result as this rank's suspect. `waited`: how long this rank waited in the op.
Laggard find_laggard(GroupRecorder& rec, uint64_t seq, const std::string& op, Millis waited, Millis wait);

// The pure part, for tests: whom the positions blame. `me` is the calling rank's own.
Laggard judge(const Position& me, const std::vector<Position>& others, uint64_t seq, Millis waited);

}  // namespace ddl::dist::flight
