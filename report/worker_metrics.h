// ResourceSampler: what this process costs, sampled from /proc every `interval_s` on a
// background thread and at explicit sample() calls: CPU % (utime+stime over wall time;
// 100 % = one core busy), resident and peak memory, host network bytes (non-loopback and
// loopback apart), disk bytes. A missing or unreadable /proc file never throws: that
// field reads "n/a" (NaN / -1). It does not measure GPU time or GPU memory.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "report/proc_parse.h"

namespace ddl::report {

// One reading. Counters (net, disk) are deltas since the sampler started; -1 = n/a.
struct ResourceSample {
  double time_s = 0;       // seconds since the sampler started
  double cpu_percent = 0;  // over the interval since the previous sample; NaN = n/a
  int64_t rss_bytes = -1;
  int64_t peak_rss_bytes = -1;                   // VmHWM: the peak over the process's whole life
  int64_t net_rx_bytes = -1, net_tx_bytes = -1;  // all interfaces but lo
  int64_t lo_rx_bytes = -1, lo_tx_bytes = -1;    // loopback
  int64_t disk_read_bytes = -1, disk_write_bytes = -1;
};

// Where the disk numbers come from: read_bytes/write_bytes (what reached storage),
// rchar/wchar (every read()/write(), sockets included: an upper bound), or nothing.
enum class DiskSource : uint8_t { Storage, Syscalls, None };
const char* disk_source_name(DiskSource s);  // "read_bytes/write_bytes", "rchar/wchar", "n/a"

struct ResourceSummary {
  double duration_s = 0;
  int64_t samples = 0;
  double mean_cpu_percent = 0;  // CPU seconds over wall seconds since start; NaN = n/a
  double max_cpu_percent = 0;   // the busiest sampled interval (intervals >= 0.2 s); NaN = n/a
  int64_t last_rss_bytes = -1;
  int64_t peak_rss_bytes = -1;
  int64_t net_rx_bytes = -1, net_tx_bytes = -1, lo_rx_bytes = -1, lo_tx_bytes = -1;
  int64_t disk_read_bytes = -1, disk_write_bytes = -1;
  DiskSource disk_source = DiskSource::None;
  // A few lines: "cpu 97.1 % mean (max 180.3 %), rss 412.0 MB (peak 530.2 MB), ...".
  std::string to_string() const;
};

struct ResourceSamplerOptions {
  double interval_s = 1.0;          // background period; <= 0: only explicit sample() calls
  std::string proc_root = "/proc";  // tests point this at a fake tree
};

class ResourceSampler {
 public:
  // Takes the baseline reading at once and, when interval_s > 0, starts the thread.
  explicit ResourceSampler(ResourceSamplerOptions opts = {});
  ~ResourceSampler();  // stops the thread
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  // Reads /proc now, records the sample and returns it. Thread-safe.
  ResourceSample sample();
  // Stops the background thread (idempotent); sample() still works.
  void stop();
  // Samples recorded since the previous call (for a metrics log written by the caller).
  std::vector<ResourceSample> take_new_samples();
  std::vector<ResourceSample> samples() const;
  // Takes a final sample, then summarises everything since construction.
  ResourceSummary summary();
  DiskSource disk_source() const { return disk_source_; }

 private:
  struct Raw {
    std::chrono::steady_clock::time_point when;
    std::optional<int64_t> cpu_ticks;
    std::optional<MemoryCounters> mem;
    std::optional<NetCounters> net;
    std::optional<IoCounters> io;
  };
  Raw read_raw() const;
  void loop();

  ResourceSamplerOptions opts_;
  double ticks_per_s_;
  Raw start_, last_;
  DiskSource disk_source_ = DiskSource::None;
  std::mutex sample_mu_;  // one sample() at a time, so readings stay in time order
  mutable std::mutex mu_;
  std::vector<ResourceSample> samples_;
  size_t taken_ = 0;
  double max_cpu_ = -1;
  int64_t peak_rss_ = -1;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// "412.0 MB", or "n/a" for a negative count. MB = 1e6 bytes, as CommStats prints.
std::string format_bytes(int64_t bytes);

}  // namespace ddl::report
