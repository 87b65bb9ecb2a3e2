// Clock alignment through the store and the gather of every rank's rendered trace to rank 0.
// Note [Trace clock alignment]: rank r stamps t0, sets a ping key, blocks on the pong key
// that rank 0 sets with its own clock ts, and stamps t1. Rank 0's stamp was taken at some
// instant inside [t0, t1] of rank r's clock, so offset = (t0 + t1) / 2 - ts is off by at
// most (t1 - t0) / 2 whatever the delays on the way; the shortest of several rounds wins.
#include "dist/trace_merge.h"

#include <cstdlib>
#include <fstream>
#include <limits>
#include <vector>

#include "dist/init.h"
#include "tensor/error.h"
#include "tensor/factory.h"
#include "trace/json_writer.h"

namespace ddl::dist {
namespace {

constexpr int kTraceTag = 0x7ace;  // p2p tags of the gather to rank 0

std::string host_name() {
  const char* h = std::getenv("DDL_HOST");
  return h ? h : "";
}

std::string track_name(int rank, const std::string& host) {
  return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
}

const char* clock_note(int world) {
  return world > 1 ? "steady_clock of each rank, shifted onto rank 0's by its clock_offset_us (NTP-style "
                     "estimate through the store, true offset within +-clock_offset_error_us); time zero = "
                     "the earliest rank's trace start"
                   : "steady_clock; time zero = the trace start";
}

void write_file(const std::string& path, const std::vector<std::string>& parts, const std::vector<std::string>& infos,
                int world) {
  std::ofstream f(path);
  DDL_CHECK(f, "write_trace: cannot open '", path, "' for writing");
  trace::write_document(f, parts, infos, clock_note(world));
  f.flush();
  DDL_CHECK(f, "write_trace: writing '", path, "' failed (disk full?)");
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
  if (world <= 1) return best;
  if (rank == 0) {
    for (int r = 1; r < world; ++r)
      for (int i = 0; i < rounds; ++i) {
        store.get(key(r, i, "ping"));
        store.set(key(r, i, "pong"), std::to_string(clock()));
      }
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
      best.offset_ns = t0 + (t1 - t0) / 2 - ts;
      best.error_ns = (t1 - t0 + 1) / 2;
    }
  }
  return best;
}

void start_trace(const std::string& path, const trace::Options& options) {
  if (get_rank() == 0) {
    std::ofstream f(path, std::ios::app);
    DDL_CHECK(f, "start_trace: cannot write the trace file '", path, "' (does its directory exist?)");
  }
  trace::start(options);
}

void write_trace(const std::string& path, ProcessGroup& group, Store& store) {
  trace::stop();
  const int rank = group.rank(), world = group.size();
  const ClockEstimate clock = estimate_clock_offset(store, rank, world);
  const trace::Snapshot s = trace::snapshot();

  // Time zero: the earliest start on rank 0's clock (Perfetto rejects negative times).
  const Tensor starts = empty({world}, TensorOptions(DType::Int64));
  const Tensor mine = empty({1}, TensorOptions(DType::Int64));
  mine.data<int64_t>()[0] = s.start_ns - clock.offset_ns;
  group.all_gather(starts, mine);
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (int r = 0; r < world; ++r) origin = std::min(origin, starts.data<int64_t>()[r]);

  trace::TrackOptions o;
  o.pid = rank;
  o.host = host_name();
  o.process_name = track_name(rank, o.host);
  o.offset_ns = clock.offset_ns;
  o.offset_error_ns = clock.error_ns;
  o.origin_ns = origin;
  const std::string events = trace::render_events(s, o), info = trace::render_process_info(s, o);

  // Rank 0 learns every part's size, then receives the parts (ranks in order).
  const Tensor sizes = empty({2 * world}, TensorOptions(DType::Int64));
  const Tensor my_sizes = empty({2}, TensorOptions(DType::Int64));
  my_sizes.data<int64_t>()[0] = static_cast<int64_t>(events.size());
  my_sizes.data<int64_t>()[1] = static_cast<int64_t>(info.size());
  group.all_gather(sizes, my_sizes);
  if (rank != 0) {
    const std::string both = events + info;
    if (both.empty()) return;
    const Tensor bytes = empty({static_cast<int64_t>(both.size())}, TensorOptions(DType::UInt8));
    std::copy(both.begin(), both.end(), bytes.data<uint8_t>());
    group.send(bytes, 0, kTraceTag);
    return;
  }
  std::vector<std::string> parts{events}, infos{info};
  for (int r = 1; r < world; ++r) {
    const int64_t n_events = sizes.data<int64_t>()[2 * r], n_info = sizes.data<int64_t>()[2 * r + 1];
    if (n_events + n_info == 0) continue;
    const Tensor bytes = empty({n_events + n_info}, TensorOptions(DType::UInt8));
    group.recv(bytes, r, kTraceTag);
    const char* p = reinterpret_cast<const char*>(bytes.data<uint8_t>());
    parts.emplace_back(p, static_cast<size_t>(n_events));
    infos.emplace_back(p + n_events, static_cast<size_t>(n_info));
  }
  write_file(path, parts, infos, world);
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
  write_file(path, {trace::render_events(s, o)}, {trace::render_process_info(s, o)}, 1);
}

}  // namespace ddl::dist
