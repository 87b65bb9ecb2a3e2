// Clock alignment through the store and the merge of every rank's rendered trace on rank 0.
// Note [Trace clock alignment]: rank r stamps t0, sets a ping key, blocks on the pong key
// that rank 0 sets with its own clock ts, and stamps t1. Rank 0's stamp was taken at some
// instant inside [t0, t1] of rank r's clock, so offset = (t0 + t1) / 2 - ts is off by at
// most (t1 - t0) / 2 whatever the delays on the way; the shortest of several rounds wins.
// Clocks drift apart (~10 ppm is common: 36 ms an hour), so start_trace estimates once
// before the trace and write_trace once after it, and times in between are interpolated.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/init.h>
#include <ddl/dist/trace_merge.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/trace/atomic_file.h>
#include <ddl/trace/json_writer.h>
#include <ddl/trace/snapshot.h>

namespace ddl::dist {
namespace {

constexpr int kTraceTag = 0x7ace;  // p2p tags of the gather to rank 0

// The estimate start_trace made, for the trace it started.
struct StartEstimate {
  std::mutex mu;
  bool valid = false;
  ClockEstimate estimate;
  int64_t trace_start_ns = 0;  // which trace it belongs to
};
StartEstimate& start_estimate() {
  static StartEstimate s;
  return s;
}

std::string host_name() {
  const char* h = std::getenv("DDL_HOST");
  return h ? h : "";
}

std::string track_name(int rank, const std::string& host) {
  return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
}

const char* clock_note(int world) {
  return world > 1 ? "steady_clock of each rank, mapped onto rank 0's through the line between two NTP-style "
                     "offset estimates through the store (clock_offset_us before the trace, clock_offset_end_us "
                     "after it; clock_estimates = 1: one estimate, a constant offset); mapped times are within "
                     "+-clock_offset_error_us if the drift was constant; time zero = the earliest rank's trace start"
                   : "steady_clock; time zero = the trace start";
}

// The merge moves text as CPU tensors: a group without a CPU backend cannot carry it.
void check_group(const ProcessGroup& group, const char* op) {
  DDL_CHECK(group.backend() != "nccl", op, ": the trace merge sends each rank's events to rank 0 as CPU tensors, ",
            "which a pure nccl process group cannot move; use backend auto (gloo for CPU, nccl for CUDA) or gloo, ",
            "or write each rank's own file with trace::write_file");
}

// Rank 0 learns before the run whether it can write `path`, without creating it.
void probe_writable(const std::string& path) {
  std::error_code ec;
  DDL_CHECK(!std::filesystem::is_directory(path, ec), "start_trace: the trace file '", path, "' is a directory");
  files::check_writable(path, "start_trace");
}

// One line on rank 0 when any rank dropped events: the file lacks them.
void warn_dropped(const std::vector<int64_t>& dropped, int64_t cap, const std::string& path) {
  int64_t total = 0;
  for (int64_t d : dropped) total += d;
  if (total == 0) return;
  std::cerr << "[rank 0/" << dropped.size() << "] trace: warning: events dropped past the cap (" << cap
            << " per process on rank 0; Options::max_events or DDL_TRACE_MAX_EVENTS):";
  for (size_t r = 0; r < dropped.size(); ++r) std::cerr << (r ? "," : "") << " rank " << r << " " << dropped[r];
  std::cerr << "; '" << path << "' lacks them\n";
}

}  // namespace

ClockEstimate estimate_clock_offset(Store& store, int rank, int world, int rounds,
                                    const std::function<int64_t()>& clock_in) {
  DDL_CHECK(rounds >= 1, "estimate_clock_offset: rounds must be >= 1, got ", rounds);
  const auto clock = clock_in ? clock_in : std::function<int64_t()>(trace::now_ns);
  // Every rank calls equally often: its own call count names the call's fresh keys.
  const int64_t call = store.add("trace_clock/calls/" + std::to_string(rank), 1);
  const std::string prefix = "trace_clock/" + std::to_string(call) + "/";
  const auto key = [&](int r, int i, const char* what) {
    return prefix + std::to_string(r) + "/" + std::to_string(i) + "/" + what;
  };
  ClockEstimate best;
  best.rounds = rounds;
  if (world <= 1) {
    best.at_ns = clock();
    return best;
  }
  if (rank == 0) {
    for (int r = 1; r < world; ++r)
      for (int i = 0; i < rounds; ++i) {
        store.get(key(r, i, "ping"));
        store.set(key(r, i, "pong"), std::to_string(clock()));
      }
    best.at_ns = clock();
    return best;
  }
  int64_t best_rtt = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < rounds; ++i) {
    const int64_t t0 = clock();
    store.set(key(rank, i, "ping"), "");
    const int64_t ts = std::strtoll(store.get(key(rank, i, "pong")).c_str(), nullptr, 10);
    const int64_t t1 = clock();
    if (t1 - t0 < best_rtt) {  // See Note [Trace clock alignment].
      best_rtt = t1 - t0;
      best.at_ns = t0 + (t1 - t0) / 2;
      best.offset_ns = best.at_ns - ts;
      best.error_ns = (t1 - t0 + 1) / 2;
    }
  }
  return best;
}

void start_trace(const std::string& path, const trace::Options& options) {
  ClockEstimate first;
  const bool job = is_initialized() && get_world_size() > 1;
  if (job) {
    check_group(default_group(), "start_trace");
    first = estimate_clock_offset(*default_store(), get_rank(), get_world_size());
  }
  // After the estimate: a rank 0 that fails here leaves no rank waiting for its pongs.
  if (get_rank() == 0) probe_writable(path);
  trace::start(options);
  flight::set_trace_path(path);  // a failed job still writes each rank's part (dist/flight/)
  StartEstimate& s = start_estimate();
  std::lock_guard<std::mutex> lock(s.mu);
  s.valid = job;
  s.estimate = first;
  s.trace_start_ns = trace::snapshot().start_ns;
}

namespace detail {

namespace {
int64_t max_trace_part_bytes(int64_t max_events) {
  // A rendered event takes about 200 bytes; 1 KiB per event of the cap in force (and 1 MiB
  // at least, for the metadata) bounds what a bad number can make rank 0 allocate.
  return std::max<int64_t>(int64_t(1) << 20, std::min<int64_t>(max_events, int64_t(1) << 40) * 1024);
}
}  // namespace

void check_trace_sizes(int rank, int64_t n_events, int64_t n_info, int64_t dropped, int64_t max_events) {
  const int64_t limit = max_trace_part_bytes(max_events);
  DDL_CHECK(n_events >= 0 && n_info >= 0 && dropped >= 0 && n_events <= limit && n_info <= limit - n_events,
            "write_trace: rank ", rank, " announced a trace of ", n_events, " + ", n_info, " bytes with ", dropped,
            " dropped events; each must be between 0 and ", limit, " bytes (1 KiB per event of the cap of ", max_events,
            "; a rank of another version or a corrupted message?)");
}

namespace {
// SAX handler: the input must be one JSON array whose every element is an object.
struct ListOfObjects : nlohmann::json_sax<nlohmann::json> {
  int depth = 0;
  int64_t objects = 0;
  bool element(bool object) {      // a value other than an array begins at `depth`
    if (depth == 0) return false;  // the outer value must be the array
    if (depth == 1 && !object) return false;
    if (depth == 1) ++objects;
    return true;
  }
  bool null() override { return element(false); }
  bool boolean(bool) override { return element(false); }
  bool number_integer(number_integer_t) override { return element(false); }
  bool number_unsigned(number_unsigned_t) override { return element(false); }
  bool number_float(number_float_t, const string_t&) override { return element(false); }
  bool string(string_t&) override { return element(false); }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    if (!element(true)) return false;
    ++depth;
    return true;
  }
  bool key(string_t&) override { return true; }
  bool end_object() override {
    --depth;
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth == 1) return false;  // an element that is a list
    ++depth;
    return true;
  }
  bool end_array() override {
    --depth;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};
}  // namespace

void check_trace_part(int rank, std::string_view events, std::string_view info) {
  // The events are spliced into the document's list after ",\n": they must be empty or
  // one or more whole objects separated by commas, nothing else.
  // JSON text never holds a raw NUL, and nlohmann's parser takes one for the end of input.
  DDL_CHECK(events.find('\0') == std::string_view::npos && info.find('\0') == std::string_view::npos,
            "write_trace: rank ", rank, " sent a NUL byte in its trace; the trace is not written");
  std::string list;
  list.reserve(events.size() + 2);
  list.append("[").append(events).append("]");
  ListOfObjects sax;
  const bool events_ok = nlohmann::json::sax_parse(list, &sax) && (events.empty() || sax.objects > 0);
  list.clear();
  list.shrink_to_fit();
  DDL_CHECK(events_ok, "write_trace: rank ", rank, " sent ", events.size(),
            " bytes of events that are not a list of JSON objects; the trace is not written");
  const auto parsed = nlohmann::json::parse(info, nullptr, /*allow_exceptions=*/false);
  DDL_CHECK(parsed.is_object(), "write_trace: rank ", rank, " sent process info that is not a JSON object (",
            info.substr(0, 60), "); the trace is not written");
}

}  // namespace detail

void write_trace(const std::string& path, ProcessGroup& group, Store& store) {
  trace::stop();
  check_group(group, "write_trace");
  const int rank = group.rank(), world = group.size();
  const ClockEstimate last = estimate_clock_offset(store, rank, world);
  trace::Snapshot s = trace::snapshot();
  trace::TrackOptions o;
  {
    StartEstimate& st = start_estimate();
    std::lock_guard<std::mutex> lock(st.mu);
    o.clock =
        st.valid && st.trace_start_ns == s.start_ns ? trace::clock_map(st.estimate, last) : trace::clock_map(last);
  }

  // Time zero: the earliest start on rank 0's clock (Perfetto rejects negative times).
  const Tensor starts = empty({world}, TensorOptions(DType::Int64));
  const Tensor mine = empty({1}, TensorOptions(DType::Int64));
  mine.data<int64_t>()[0] = o.clock.to_reference(s.start_ns);
  group.all_gather(starts, mine);
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (int r = 0; r < world; ++r) origin = std::min(origin, starts.data<int64_t>()[r]);

  o.pid = rank;
  o.host = host_name();
  o.process_name = track_name(rank, o.host);
  o.origin_ns = origin;
  const std::string info = trace::render_process_info(s, o);

  // Rank 0 learns every part's size and drops; the other ranks render their events and send
  // them, and rank 0 appends one rank at a time (it holds at most one rank's text).
  const Tensor sizes = empty({3 * world}, TensorOptions(DType::Int64));
  const Tensor my_sizes = empty({3}, TensorOptions(DType::Int64));
  std::string events;
  if (rank != 0) events = trace::render_events(s, o);
  my_sizes.data<int64_t>()[0] = static_cast<int64_t>(events.size());
  my_sizes.data<int64_t>()[1] = static_cast<int64_t>(info.size());
  my_sizes.data<int64_t>()[2] = s.dropped;
  group.all_gather(sizes, my_sizes);
  if (rank != 0) {
    s = trace::Snapshot();  // the text is all that is sent
    const std::string both = events + info;
    events.clear();
    const Tensor bytes = empty({static_cast<int64_t>(both.size())}, TensorOptions(DType::UInt8));
    std::copy(both.begin(), both.end(), bytes.data<uint8_t>());
    group.send(bytes, 0, kTraceTag);
    return;
  }
  files::AtomicFile file(path, "write_trace");  // whole or not at all: a rank may die mid-merge
  trace::DocumentWriter doc(file.stream());
  doc.add_events(s, o);
  std::vector<std::string> infos{info};
  std::vector<int64_t> dropped{s.dropped};
  for (int r = 1; r < world; ++r) {
    const int64_t n_events = sizes.data<int64_t>()[3 * r], n_info = sizes.data<int64_t>()[3 * r + 1];
    dropped.push_back(sizes.data<int64_t>()[3 * r + 2]);
    detail::check_trace_sizes(r, n_events, n_info, dropped.back(), s.max_events);
    const Tensor bytes = empty({n_events + n_info}, TensorOptions(DType::UInt8));
    group.recv(bytes, r, kTraceTag);
    const char* p = reinterpret_cast<const char*>(bytes.data<uint8_t>());
    const std::string_view events(p, static_cast<size_t>(n_events)), part_info(p + n_events, size_t(n_info));
    detail::check_trace_part(r, events, part_info);
    doc.add_events(events);
    infos.emplace_back(part_info);
  }
  doc.finish(infos, clock_note(world));
  file.commit();
  warn_dropped(dropped, s.max_events, path);
}

void write_trace(const std::string& path) {
  if (is_initialized() && get_world_size() > 1) {
    write_trace(path, default_group(), *default_store());
    return;
  }
  trace::stop();
  const trace::Snapshot s = trace::snapshot();
  trace::TrackOptions o;
  o.host = host_name();
  o.process_name = track_name(0, o.host);
  o.origin_ns = s.start_ns;
  files::AtomicFile file(path, "write_trace");
  trace::DocumentWriter doc(file.stream());
  doc.add_events(s, o);
  doc.finish({trace::render_process_info(s, o)}, clock_note(1));
  file.commit();
  warn_dropped({s.dropped}, s.max_events, path);
}

}  // namespace ddl::dist
