// One timeline for a whole job: each rank's clock offset to rank 0 is estimated through the
// store as NTP does, at the start and at the end of the trace, every rank's trace is mapped
// onto rank 0's clock (trace/clock_map.h) and sent to rank 0 through the process group (no
// shared filesystem needed), and rank 0 writes one Chrome trace-event file with a process
// track per rank, appending one rank at a time. See docs/trace.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <ddl/dist/process_group.h>
#include <ddl/dist/store/store.h>
#include <ddl/trace/clock_map.h>
#include <ddl/trace/trace.h>

namespace ddl::dist {

// This rank's clock minus rank 0's, in nanoseconds: the true offset lay within
// offset_ns ± error_ns (half the round trip of the best exchange) at this clock's at_ns.
using ClockEstimate = trace::ClockEstimate;

// Collective over `store` (every rank calls it the same number of times): rank 0 answers
// `rounds` pings of every other rank with its clock; each rank keeps the exchange with the
// shortest round trip. Rank 0 gets offset and error 0. `clock` is the trace clock unless a test injects
// one. Throws ddl::Error (naming the rank and key) when a rank does not answer in time.
ClockEstimate estimate_clock_offset(Store& store, int rank, int world, int rounds = 10,
                                    const std::function<int64_t()>& clock = {});

// Starts tracing for a job whose trace write_trace(path) will write. Collective over the
// default group when there is one with several ranks: it makes the first clock estimate,
// and fails at once on a group that cannot move CPU tensors (pure nccl: the merge sends
// the text as CPU tensors; use backend auto or gloo). Rank 0 then checks that it can write
// `path` (a probe file beside it, removed; `path` itself is not created), so a bad path
// fails before the run, not after. Throws ddl::Error naming the file or the backend, or
// trace::start's error about the cap.
void start_trace(const std::string& path, const trace::Options& options = {});

// Stops tracing and writes the job's trace to `path` on rank 0 (other ranks write nothing).
// Collective over the group when it has several ranks; a single process writes its own
// file. Tracks are named "rank r", or "rank r (host)" when DDL_HOST is set; the file's
// otherData holds each rank's clock estimates, drift and error bound, its event count and
// drops, and rank 0 warns on stderr when any rank dropped events. Throws ddl::Error naming
// the file when rank 0 cannot write it, or the backend when the group is pure nccl.
void write_trace(const std::string& path, ProcessGroup& group, Store& store);
// The same over the default group and its store, or for this process alone before
// init_process_group (or in a world of one).
void write_trace(const std::string& path);

namespace detail {
// Rank 0's checks of what rank `rank` announces (sizes, drops; at most 1 KiB per event of
// rank 0's cap `max_events`) and then sends (its events, a comma-separated list of JSON
// objects, and its process info, one JSON object) for the merged trace: a peer's numbers
// and bytes are never trusted. Each throws a ddl::Error naming the rank.
void check_trace_sizes(int rank, int64_t n_events, int64_t n_info, int64_t dropped, int64_t max_events);
void check_trace_part(int rank, std::string_view events, std::string_view info);
}  // namespace detail

}  // namespace ddl::dist
