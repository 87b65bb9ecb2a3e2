// Renders snapshots as trace-event JSON by hand (std only: trace/, just above base/, takes no JSON
// library). Every number written is an integer or a fixed-point value (microseconds, ppm),
// so the output does not depend on the locale or on floating-point formatting.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include <ddl/base/error.h>
#include <ddl/trace/atomic_file.h>
#include <ddl/trace/json_writer.h>

namespace ddl::trace {
namespace {

// Thousandths as a fixed-point number with three decimals: 1234567 -> "1234.567".
void put_milli(std::ostream& os, int64_t n) {
  if (n < 0) {
    os << '-';
    n = -n;
  }
  char frac[8];
  std::snprintf(frac, sizeof frac, "%03lld", static_cast<long long>(n % 1000));
  os << n / 1000 << '.' << frac;
}
void put_us(std::ostream& os, int64_t ns) { put_milli(os, ns); }

void put_args(std::ostream& os, const Event& e) {
  os << ",\"args\":{";
  for (int k = 0; k < e.nargs; ++k) os << (k ? "," : "") << json_quote(e.args[k].key) << ':' << e.args[k].value;
  os << '}';
}

void put_meta(std::ostream& os, bool& first, const char* what, int pid, int tid, const std::string& key,
              const std::string& value_json) {
  os << (first ? "" : ",\n") << "{\"ph\":\"M\",\"name\":\"" << what << "\",\"pid\":" << pid << ",\"tid\":" << tid
     << ",\"args\":{\"" << key << "\":" << value_json << "}}";
  first = false;
}

void put_event(std::ostream& os, const Event& e, const TrackOptions& o) {
  const int64_t ts = o.clock.to_reference(e.ts_ns) - o.origin_ns;
  os << ",\n{\"ph\":\"" << e.phase << "\",\"name\":" << json_quote(e.name ? e.name : "?")
     << ",\"cat\":" << json_quote(e.cat ? e.cat : "") << ",\"pid\":" << o.pid << ",\"tid\":" << e.tid << ",\"ts\":";
  put_us(os, ts);
  if (e.phase == 'X') {
    // Both ends mapped: the map never decreases, so children stay inside their parents.
    os << ",\"dur\":";
    put_us(os, o.clock.to_reference(e.ts_ns + e.dur_ns) - o.origin_ns - ts);
  } else if (e.phase == 'i') {
    os << ",\"s\":\"t\"";
  } else if (e.phase == 'b' || e.phase == 'e') {
    // Ids are per process: a rank's bucket 3 is not another rank's bucket 3.
    os << ",\"id2\":{\"local\":\"0x" << std::hex << e.id << std::dec << "\"}";
  }
  if (e.nargs > 0 || e.phase == 'C') put_args(os, e);
  os << '}';
}

// Note [Unmatched async spans]: when the cap drops an async end, its begin has no partner
// and viewers draw the slice to the end of the trace and beyond; an end whose begin is
// missing (stamped before start()) is meaningless. At write time, ends without a begin are
// left out and begins without an end get one at the trace's stop, with unfinished = 1.
struct AsyncPairs {
  std::vector<bool> skip;       // per event: an unmatched end
  std::vector<size_t> unended;  // unmatched begins
};

AsyncPairs match_async(const Snapshot& s) {
  AsyncPairs p;
  p.skip.assign(s.events.size(), false);
  std::map<std::tuple<std::string_view, std::string_view, uint64_t>, std::vector<size_t>> open;
  for (size_t i = 0; i < s.events.size(); ++i) {
    const Event& e = s.events[i];
    if (e.phase != 'b' && e.phase != 'e') continue;
    auto& stack = open[{e.name ? e.name : "", e.cat ? e.cat : "", e.id}];
    if (e.phase == 'b') {
      stack.push_back(i);
    } else if (stack.empty()) {
      p.skip[i] = true;
    } else {
      stack.pop_back();
    }
  }
  for (const auto& [key, stack] : open) p.unended.insert(p.unended.end(), stack.begin(), stack.end());
  return p;
}

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void render_events(std::ostream& os, const Snapshot& s, const TrackOptions& o) {
  bool first = true;
  const std::string pname = o.process_name.empty() ? s.process_name : o.process_name;
  put_meta(os, first, "process_name", o.pid, 0, "name", json_quote(pname));
  put_meta(os, first, "process_sort_index", o.pid, 0, "sort_index", std::to_string(o.pid));
  for (const ThreadTrack& t : s.threads) {
    put_meta(os, first, "thread_name", o.pid, t.tid, "name", json_quote(t.name));
    put_meta(os, first, "thread_sort_index", o.pid, t.tid, "sort_index", std::to_string(t.tid));
  }
  const AsyncPairs pairs = match_async(s);  // See Note [Unmatched async spans].
  int64_t last_ns = s.stop_ns;
  for (size_t i = 0; i < s.events.size(); ++i) {
    if (pairs.skip[i]) continue;
    put_event(os, s.events[i], o);
    last_ns = std::max(last_ns, s.events[i].ts_ns);
  }
  for (size_t i : pairs.unended) {
    Event end = s.events[i];
    end.phase = 'e';
    end.ts_ns = last_ns;
    end.args[0] = Arg{"unfinished", 1};
    end.nargs = 1;
    put_event(os, end, o);
  }
}

std::string render_events(const Snapshot& s, const TrackOptions& o) {
  std::ostringstream os;
  render_events(os, s, o);
  return os.str();
}

std::string render_process_info(const Snapshot& s, const TrackOptions& o) {
  const ClockMap& c = o.clock;
  std::ostringstream os;
  os << "{\"pid\":" << o.pid << ",\"name\":" << json_quote(o.process_name.empty() ? s.process_name : o.process_name);
  if (!o.host.empty()) os << ",\"host\":" << json_quote(o.host);
  os << ",\"clock_estimates\":" << c.estimates << ",\"clock_offset_us\":";
  put_us(os, c.first.offset_ns);
  os << ",\"clock_offset_error_us\":";
  put_us(os, c.error_ns);
  if (c.estimates == 2) {
    os << ",\"clock_offset_start_error_us\":";
    put_us(os, c.first.error_ns);
    os << ",\"clock_offset_end_us\":";
    put_us(os, c.last.offset_ns);
    os << ",\"clock_offset_end_error_us\":";
    put_us(os, c.last.error_ns);
    os << ",\"clock_estimates_apart_us\":";
    put_us(os, c.last.at_ns - c.first.at_ns);
    os << ",\"clock_drift_ppm\":";
    put_milli(os, std::llround(c.drift * 1e9));  // parts per billion, written as ppm
  }
  os << ",\"events\":" << s.events.size() << ",\"dropped_events\":" << s.dropped << ",\"max_events\":" << s.max_events
     << ",\"unfinished_async_spans\":" << match_async(s).unended.size() << ",\"duration_us\":";
  put_us(os, s.stop_ns - s.start_ns);
  os << '}';
  return os.str();
}

DocumentWriter::DocumentWriter(std::ostream& os) : os_(os) {
  os_ << "{\"displayTimeUnit\":\"ms\",\n\"traceEvents\":[\n";
}

void DocumentWriter::add_events(std::string_view part) {
  if (part.empty()) return;
  os_ << (first_ ? "" : ",\n") << part;
  first_ = false;
}

void DocumentWriter::add_events(const Snapshot& s, const TrackOptions& o) {
  os_ << (first_ ? "" : ",\n");
  render_events(os_, s, o);
  first_ = false;
}

void DocumentWriter::finish(const std::vector<std::string>& process_infos, const std::string& clock_note) {
  os_ << "\n],\n\"otherData\":{\"ddl_trace\":{\"version\":2,\"time_unit\":\"us\",\"clock\":" << json_quote(clock_note)
      << ",\"processes\":[";
  for (size_t i = 0; i < process_infos.size(); ++i) os_ << (i ? "," : "") << process_infos[i];
  os_ << "]}}}\n";
}

void write_file(const std::string& path) {
  stop();
  const Snapshot s = snapshot();
  TrackOptions o;
  o.origin_ns = s.start_ns;
  files::AtomicFile file(path, "trace");  // a whole file or none, never through a planted link
  DocumentWriter doc(file.stream());
  doc.add_events(s, o);
  doc.finish({render_process_info(s, o)}, "one process: steady_clock, time zero at trace::start()");
  file.commit();
  if (s.dropped > 0)
    std::cerr << "trace: warning: " << s.dropped << " events were dropped past the cap of " << s.max_events
              << " (Options::max_events or DDL_TRACE_MAX_EVENTS); '" << path << "' lacks them\n";
}

}  // namespace ddl::trace
