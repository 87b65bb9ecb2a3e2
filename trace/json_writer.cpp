// Renders snapshots as trace-event JSON by hand (std only: the bottom layer takes no JSON
// library). Every number written is an integer or a fixed-point microsecond value, so the
// output does not depend on the locale or on floating-point formatting.
#include "trace/json_writer.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tensor/error.h"

namespace ddl::trace {
namespace {

// Nanoseconds as microseconds with three decimals: "1234.567".
void put_us(std::ostream& os, int64_t ns) {
  if (ns < 0) {
    os << '-';
    ns = -ns;
  }
  char frac[8];
  std::snprintf(frac, sizeof frac, "%03lld", static_cast<long long>(ns % 1000));
  os << ns / 1000 << '.' << frac;
}

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

std::string render_events(const Snapshot& s, const TrackOptions& o) {
  std::ostringstream os;
  bool first = true;
  const std::string pname = o.process_name.empty() ? s.process_name : o.process_name;
  put_meta(os, first, "process_name", o.pid, 0, "name", json_quote(pname));
  put_meta(os, first, "process_sort_index", o.pid, 0, "sort_index", std::to_string(o.pid));
  for (const ThreadTrack& t : s.threads) {
    put_meta(os, first, "thread_name", o.pid, t.tid, "name", json_quote(t.name));
    put_meta(os, first, "thread_sort_index", o.pid, t.tid, "sort_index", std::to_string(t.tid));
  }
  for (const Event& e : s.events) {
    os << ",\n{\"ph\":\"" << e.phase << "\",\"name\":" << json_quote(e.name ? e.name : "?")
       << ",\"cat\":" << json_quote(e.cat ? e.cat : "") << ",\"pid\":" << o.pid << ",\"tid\":" << e.tid << ",\"ts\":";
    put_us(os, e.ts_ns - o.offset_ns - o.origin_ns);
    if (e.phase == 'X') {
      os << ",\"dur\":";
      put_us(os, e.dur_ns);
    } else if (e.phase == 'i') {
      os << ",\"s\":\"t\"";
    } else if (e.phase == 'b' || e.phase == 'e') {
      // Ids are per process: a rank's bucket 3 is not another rank's bucket 3.
      os << ",\"id2\":{\"local\":\"0x" << std::hex << e.id << std::dec << "\"}";
    }
    if (e.nargs > 0 || e.phase == 'C') put_args(os, e);
    os << '}';
  }
  return os.str();
}

std::string render_process_info(const Snapshot& s, const TrackOptions& o) {
  std::ostringstream os;
  os << "{\"pid\":" << o.pid << ",\"name\":" << json_quote(o.process_name.empty() ? s.process_name : o.process_name);
  if (!o.host.empty()) os << ",\"host\":" << json_quote(o.host);
  os << ",\"clock_offset_us\":";
  put_us(os, o.offset_ns);
  os << ",\"clock_offset_error_us\":";
  put_us(os, o.offset_error_ns);
  os << ",\"events\":" << s.events.size() << ",\"dropped_events\":" << s.dropped << ",\"max_events\":" << s.max_events
     << ",\"duration_us\":";
  put_us(os, s.stop_ns - s.start_ns);
  os << '}';
  return os.str();
}

void write_document(std::ostream& os, const std::vector<std::string>& event_parts,
                    const std::vector<std::string>& process_infos, const std::string& clock_note) {
  os << "{\"displayTimeUnit\":\"ms\",\n\"traceEvents\":[\n";
  bool first = true;
  for (const std::string& p : event_parts) {
    if (p.empty()) continue;
    os << (first ? "" : ",\n") << p;
    first = false;
  }
  os << "\n],\n\"otherData\":{\"ddl_trace\":{\"version\":1,\"time_unit\":\"us\",\"clock\":" << json_quote(clock_note)
     << ",\"processes\":[";
  for (size_t i = 0; i < process_infos.size(); ++i) os << (i ? "," : "") << process_infos[i];
  os << "]}}}\n";
}

void write_file(const std::string& path) {
  stop();
  const Snapshot s = snapshot();
  TrackOptions o;
  o.origin_ns = s.start_ns;
  std::ofstream f(path);
  if (!f) throw Error("trace: cannot open '" + path + "' for writing");
  write_document(f, {render_events(s, o)}, {render_process_info(s, o)},
                 "one process: steady_clock, time zero at trace::start()");
  f.flush();
  if (!f) throw Error("trace: writing '" + path + "' failed (disk full?)");
}

}  // namespace ddl::trace
