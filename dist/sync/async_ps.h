// async-ps:S, the asynchronous parameter server with bounded staleness (stale-synchronous
// parallel, Ho et al., "More Effective Distributed ML via a Stale Synchronous Parallel
// Parameter Server", NIPS 2013). What it reports; the strategy is in async_ps.cpp.
#pragma once

#include <cstdint>
#include <vector>

namespace ddl::dist {

struct AsyncPsStats {
  int staleness_bound = 0;
  // Rank 0 (the server): every applied update's staleness, in updates: how many other
  // updates the server applied between the pull the worker computed on and this push.
  int64_t updates = 0;
  int64_t max_staleness = 0;
  double mean_staleness = 0;
  std::vector<int64_t> histogram;  // [k]: updates of staleness k
  // Every rank: at each pull, this worker's clock minus the slowest worker's (how many
  // clocks of some worker's updates its next gradient may miss); never above the bound.
  int64_t max_clock_gap = 0;
  std::vector<int64_t> clock_gaps;  // one per step of this rank
};

class SyncStrategy;
// The statistics of an async-ps strategy (make_sync_strategy("async-ps:S", ...)); null for others.
const AsyncPsStats* async_ps_stats(const SyncStrategy& s);

}  // namespace ddl::dist
