// MetricsLog: the `--metrics FILE` writer. One JSON object per line per event ("sample",
// "step", "epoch", "eval", "summary", or the caller's own), each carrying "event", "rank",
// "world", "time_s" (seconds since the log opened) and "unix_time_s". n/a values are null;
// every key with a unit names it (_s, _bytes, _pct, _percent).
// Each line is flushed at once, so a killed run keeps what it logged. Thread-safe.
// It does not aggregate across ranks: each rank writes its own file (metrics_path_for_rank).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include <ddl/dist/process_group.h>
#include <ddl/report/step_timer.h>
#include <ddl/report/worker_metrics.h>

namespace ddl::report {

// `path` itself for world 1; otherwise ".rank<r>" goes before the extension
// ("m.jsonl" → "m.rank1.jsonl"), so ranks never write into one file.
std::string metrics_path_for_rank(const std::string& path, int rank, int world);

class MetricsLog {
 public:
  MetricsLog() = default;  // disabled: every call does nothing
  // Opens (truncates, or appends when `append`: a restarted run) the file; throws
  // ddl::Error naming the path when it cannot be opened.
  MetricsLog(const std::string& path, int rank, int world, bool append = false);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  bool enabled() const { return file_ != nullptr; }
  const std::string& path() const { return path_; }

  // Writes `fields` plus the common keys as one line. Throws ddl::Error naming the file when
  // the line cannot be written whole (a full disk), so a run never ends with a silently
  // truncated log.
  void write(const std::string& event, nlohmann::json fields = nlohmann::json::object());
  void sample(const ResourceSample& s);
  // extra: the caller's values (loss, accuracy, lr, ...), merged into the line.
  void step(int64_t epoch, int64_t step, const StepTimes& t, nlohmann::json extra = nlohmann::json::object());
  void epoch(int64_t epoch, const EpochTimes& t, nlohmann::json extra = nlohmann::json::object());
  void summary(const ResourceSummary& s, nlohmann::json extra = nlohmann::json::object());

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  int rank_ = 0, world_ = 1;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
};

// The JSON forms, for callers that build their own events (sync_study, tests).
nlohmann::json to_json(const ResourceSample& s);
nlohmann::json to_json(const ResourceSummary& s);
nlohmann::json to_json(const StepTimes& t);   // {"data_s":..., ..., "total_s":...}
nlohmann::json to_json(const EpochTimes& t);  // steps, wall_s, "total": {...}, "mean": {...}
// Per operation kind with calls > 0: {"all_reduce": {"calls", "bytes_sent", "bytes_received"}, ...}
nlohmann::json to_json(const dist::CommStats& s);

}  // namespace ddl::report
