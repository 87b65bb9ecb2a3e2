// Chrome trace-event JSON ("Trace Event Format", the JSON object form) from snapshots: what
// Perfetto (ui.perfetto.dev) and chrome://tracing open. A process's events are rendered on
// their own (so a job's ranks can render theirs and send the text to rank 0), then
// appended to one document a process at a time. Timestamps are microseconds from the
// document's origin, on the reference clock (clock_map.h).
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <ddl/trace/clock_map.h>
#include <ddl/trace/snapshot.h>

namespace ddl::trace {

// How one process's snapshot is placed in a document.
struct TrackOptions {
  int pid = 0;               // the process track (dist/trace_merge.h: the rank)
  std::string process_name;  // "" = the snapshot's
  ClockMap clock;            // this clock onto the reference clock (default: it is the reference)
  int64_t origin_ns = 0;     // the document's time zero, on the reference clock
  std::string host;          // metadata only ("" = not given)
};

// The snapshot's events plus its process/thread name metadata events, as comma-separated
// JSON objects (no brackets), ready to append to a document. Async halves whose partner
// is missing (cut by the cap) are mended: See Note [Unmatched async spans] in the .cpp.
void render_events(std::ostream& os, const Snapshot& s, const TrackOptions& o);
std::string render_events(const Snapshot& s, const TrackOptions& o);
// One JSON object for the document's metadata: pid, name, host, clock estimates and bound,
// events, dropped, cap.
std::string render_process_info(const Snapshot& s, const TrackOptions& o);

// {"displayTimeUnit":"ms","traceEvents":[parts...],"otherData":{"ddl_trace":{...,"processes":[infos...]}}}
// written in pieces, so a merge holds one process's part at a time.
class DocumentWriter {
 public:
  explicit DocumentWriter(std::ostream& os);  // writes the opening
  void add_events(std::string_view part);     // render_events() text
  void add_events(const Snapshot& s, const TrackOptions& o);
  void finish(const std::vector<std::string>& process_infos, const std::string& clock_note);

 private:
  std::ostream& os_;
  bool first_ = true;
};

// Stops recording and writes this process's trace to `path` as one document (pid 0, time
// zero at start()); warns on stderr when events were dropped. Throws ddl::Error naming the
// file when it cannot be written. For a multi-process job use dist::write_trace
// (dist/trace_merge.h), which merges the ranks.
void write_file(const std::string& path);

// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace ddl::trace
