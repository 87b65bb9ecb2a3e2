// Chrome trace-event JSON ("Trace Event Format", the JSON object form) from snapshots: what
// Perfetto (ui.perfetto.dev) and chrome://tracing open. A process's events are rendered on
// their own (so a job's ranks can render theirs and send the text to rank 0), then joined
// into one document. Timestamps are microseconds from the document's origin.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "trace/snapshot.h"

namespace ddl::trace {

// How one process's snapshot is placed in a document.
struct TrackOptions {
  int pid = 0;                  // the process track (dist/trace_merge.h: the rank)
  std::string process_name;     // "" = the snapshot's
  int64_t offset_ns = 0;        // this clock minus the reference clock (subtracted from every ts)
  int64_t offset_error_ns = 0;  // bound on |offset's error| (metadata only)
  int64_t origin_ns = 0;        // the document's time zero, on the reference clock
  std::string host;             // metadata only ("" = not given)
};

// The snapshot's events plus its process/thread name metadata events, as comma-separated
// JSON objects (no brackets), ready to join with other processes' parts.
std::string render_events(const Snapshot& s, const TrackOptions& o);
// One JSON object for the document's metadata: pid, name, host, offset, events, dropped, cap.
std::string render_process_info(const Snapshot& s, const TrackOptions& o);
// {"displayTimeUnit":"ms","traceEvents":[parts...],"otherData":{"ddl_trace":{...,"processes":[infos...]}}}
void write_document(std::ostream& os, const std::vector<std::string>& event_parts,
                    const std::vector<std::string>& process_infos, const std::string& clock_note);

// Stops recording and writes this process's trace to `path` as one document (pid 0, time
// zero at start()). Throws ddl::Error naming the file when it cannot be written. For a
// multi-process job use dist::write_trace (dist/trace_merge.h), which merges the ranks.
void write_file(const std::string& path);

// `s` as a JSON string literal, quotes included.
std::string json_quote(std::string_view s);

}  // namespace ddl::trace
