// MetricsLog: JSON lines through nlohmann::json, one fwrite + fflush per event.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <ddl/base/error.h>
#include <ddl/report/metrics_log.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::report {
namespace {

using nlohmann::json;

json count_or_null(int64_t v) { return v < 0 ? json(nullptr) : json(v); }
json real_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// See Note [OS counters] in worker_metrics.h.
void add_os(json& j, const OsCounters& c) {
  j["voluntary_ctxt_switches"] = count_or_null(c.voluntary_switches);
  j["involuntary_ctxt_switches"] = count_or_null(c.involuntary_switches);
  j["minor_faults"] = count_or_null(c.minor_faults);
  j["major_faults"] = count_or_null(c.major_faults);
  j["cgroup_throttled_periods"] = count_or_null(c.throttled_periods);
  j["cgroup_throttled_s"] = c.throttled_us < 0 ? json(nullptr) : json(c.throttled_us / 1e6);
  j["tensor_allocated_bytes"] = count_or_null(c.allocated_bytes);
  j["tensor_reserved_bytes"] = count_or_null(c.reserved_bytes);
  j["tensor_peak_allocated_bytes"] = count_or_null(c.peak_allocated_bytes);
}

}  // namespace

std::string metrics_path_for_rank(const std::string& path, int rank, int world) {
  if (world <= 1) return path;
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  std::string tag = ".rank" + std::to_string(rank);
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1) return path + tag;
  return path.substr(0, dot) + tag + path.substr(dot);
}

json to_json(const ResourceSample& s) {
  json j = {{"cpu_percent", real_or_null(s.cpu_percent)},
            {"rss_bytes", count_or_null(s.rss_bytes)},
            {"peak_rss_bytes", count_or_null(s.peak_rss_bytes)},
            {"net_rx_bytes", count_or_null(s.net_rx_bytes)},
            {"net_tx_bytes", count_or_null(s.net_tx_bytes)},
            {"lo_rx_bytes", count_or_null(s.lo_rx_bytes)},
            {"lo_tx_bytes", count_or_null(s.lo_tx_bytes)},
            {"disk_read_bytes", count_or_null(s.disk_read_bytes)},
            {"disk_write_bytes", count_or_null(s.disk_write_bytes)},
            {"sampler_time_s", s.time_s}};
  add_os(j, s.os);
  return j;
}

json to_json(const ResourceSummary& s) {
  json j = {{"duration_s", s.duration_s},
            {"samples", s.samples},
            {"mean_cpu_percent", real_or_null(s.mean_cpu_percent)},
            {"max_cpu_percent", real_or_null(s.max_cpu_percent)},
            {"rss_bytes", count_or_null(s.last_rss_bytes)},
            {"peak_rss_bytes", count_or_null(s.peak_rss_bytes)},
            {"net_rx_bytes", count_or_null(s.net_rx_bytes)},
            {"net_tx_bytes", count_or_null(s.net_tx_bytes)},
            {"lo_rx_bytes", count_or_null(s.lo_rx_bytes)},
            {"lo_tx_bytes", count_or_null(s.lo_tx_bytes)},
            {"disk_read_bytes", count_or_null(s.disk_read_bytes)},
            {"disk_write_bytes", count_or_null(s.disk_write_bytes)},
            {"disk_source", disk_source_name(s.disk_source)}};
  add_os(j, s.os);
  return j;
}

json to_json(const StepTimes& t) {
  json j = json::object();
  for (int p = 0; p < kNumPhases; ++p) j[std::string(phase_name(static_cast<Phase>(p))) + "_s"] = t.phase_s[p];
  j["other_s"] = t.other_s();
  j["total_s"] = t.total_s;
  return j;
}

json to_json(const EpochTimes& t) {
  return {{"steps", t.steps},
          {"mean_steps", t.mean_steps},
          {"wall_s", t.wall_s},
          {"total", to_json(t.total)},
          {"mean", to_json(t.mean)}};
}

json to_json(const dist::CommStats& s) {
  json j = json::object();
  for (int k = 0; k < dist::kNumOpKinds; ++k) {
    const dist::OpStats& op = s.ops[k];
    if (op.calls > 0)
      j[dist::op_kind_name(static_cast<dist::OpKind>(k))] = {
          {"calls", op.calls}, {"bytes_sent", op.bytes_sent}, {"bytes_received", op.bytes_received}};
  }
  return j;
}

MetricsLog::MetricsLog(const std::string& path, int rank, int world, bool append)
    : path_(path), rank_(rank), world_(world), start_(std::chrono::steady_clock::now()) {
  // Never through a symlink or into a FIFO someone placed at the path.
  const int fd = files::open_for_writing(path, O_CREAT | (append ? O_APPEND : O_TRUNC), "MetricsLog");
  file_ = ::fdopen(fd, append ? "a" : "w");
  if (!file_) ::close(fd);
  DDL_CHECK(file_ != nullptr, "MetricsLog: cannot open '", path, "' for writing");
}

MetricsLog::~MetricsLog() {
  if (file_) std::fclose(file_);
}

void MetricsLog::write(const std::string& event, json fields) {
  if (!file_) return;
  json line = {{"event", event}, {"rank", rank_}, {"world", world_}};
  line["time_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  line["unix_time_s"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (fields.is_object()) line.update(fields);
  // Replace invalid UTF-8 (a class name, a path) rather than throw mid-training.
  std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  // A full disk must not end a run "successfully" with a truncated log: fail naming the file.
  errno = 0;
  const bool written = std::fwrite(text.data(), 1, text.size(), file_) == text.size() && std::fflush(file_) == 0;
  DDL_CHECK(written, "MetricsLog: writing '", path_, "' failed: ", errno ? std::strerror(errno) : "short write",
            " (disk full?); the metrics file is incomplete");
}

void MetricsLog::sample(const ResourceSample& s) { write("sample", to_json(s)); }

void MetricsLog::step(int64_t epoch, int64_t step, const StepTimes& t, json extra) {
  json j = to_json(t);
  j["epoch"] = epoch;
  j["step"] = step;
  if (extra.is_object()) j.update(extra);
  write("step", std::move(j));
}

void MetricsLog::epoch(int64_t epoch, const EpochTimes& t, json extra) {
  json j = to_json(t);
  j["epoch"] = epoch;
  if (extra.is_object()) j.update(extra);
  write("epoch", std::move(j));
}

void MetricsLog::summary(const ResourceSummary& s, json extra) {
  json j = to_json(s);
  if (extra.is_object()) j.update(extra);
  write("summary", std::move(j));
}

}  // namespace ddl::report
