// What a trace recorded, read back after trace::stop(): the events of every thread, the
// track names and the cap's accounting. Writers (json_writer.h, dist/trace_merge.h) and
// tests read it; it is a copy, so recording may start again while it is in use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ddl/trace/trace.h>

namespace ddl::trace {

// One recorded event (96 bytes). Phases as in the Trace Event Format: 'X' complete span
// (ts, dur), 'i' instant, 'C' counter (args are its series), 'b'/'e' async begin/end (id).
struct Event {
  int64_t ts_ns = 0;   // trace clock (now_ns())
  int64_t dur_ns = 0;  // 'X' only
  const char* name = nullptr;
  const char* cat = nullptr;
  uint64_t id = 0;  // 'b'/'e' only
  Arg args[kMaxArgs];
  int32_t tid = 0;
  uint8_t nargs = 0;
  char phase = 0;
};

struct ThreadTrack {
  int32_t tid = 0;
  std::string name;
};

struct Snapshot {
  std::vector<Event> events;  // ordered by ts_ns (ties keep recording order)
  std::vector<ThreadTrack> threads;
  std::string process_name;
  int64_t start_ns = 0, stop_ns = 0;  // trace clock at start() and stop() (or now)
  int64_t max_events = 0;             // the cap in force
  int64_t dropped = 0;                // events past the cap, not recorded
};

// The current (or last) trace. Call after stop() for a complete one; during recording it
// holds what the threads had finished recording.
Snapshot snapshot();

}  // namespace ddl::trace
