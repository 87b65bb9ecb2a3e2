// ResourceSampler: what this process costs, sampled from /proc every `interval_s` on a
// background thread and at explicit sample() calls: CPU % (utime+stime over wall time;
// 100 % = one core busy), resident and peak memory, host network bytes (non-loopback and
// loopback apart), disk bytes, and the OS figures an OS course looks at (OsCounters:
// context switches, page faults, cgroup CPU throttling, the tensor allocator's bytes). A missing or unreadable /proc
// file never throws: that field reads "n/a" (NaN / -1). It does not measure GPU time or GPU memory.
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

#include <ddl/report/proc_parse.h>

namespace ddl::report {

// Note [OS counters]: getrusage(2) RUSAGE_SELF sums every thread of the process, ended
// ones included (/proc/self/status counts the main thread only). Throttling is read from
// cpu.stat of the nearest cgroup, this process's or an ancestor, that has a CPU quota
// (v2 cpu.max, else v1 cpu.cfs_quota_us; the cgroup of an emulated host under
// `ddlrun --cpu`): n/a when none has one. Its counters cover every process in that cgroup.
// -1 = n/a; counts and throttling are deltas since the sampler started.
struct OsCounters {
  int64_t voluntary_switches = -1;    // ru_nvcsw: the thread gave up the CPU (waited on I/O, a lock, a peer)
  int64_t involuntary_switches = -1;  // ru_nivcsw: the kernel took the CPU away (time slice, throttling)
  int64_t minor_faults = -1;          // ru_minflt: pages mapped without I/O (first touch of fresh memory)
  int64_t major_faults = -1;          // ru_majflt: pages that needed I/O
  int64_t throttled_periods = -1;     // cpu.stat nr_throttled: periods in which the quota ran out
  int64_t throttled_us = -1;          // cpu.stat throttled time, microseconds
  // The CPU tensor allocator (cpu::memory_stats, tensor/core/allocator.h) now, not deltas:
  int64_t allocated_bytes = -1;       // held by live tensors
  int64_t reserved_bytes = -1;        // allocated plus cached for reuse
  int64_t peak_allocated_bytes = -1;  // the most ever allocated at once
};

// One reading. Counters (net, disk) are deltas since the sampler started; -1 = n/a.
struct ResourceSample {
  double time_s = 0;       // seconds since the sampler started
  double cpu_percent = 0;  // over the interval since the previous sample; NaN = n/a
  int64_t rss_bytes = -1;
  int64_t peak_rss_bytes = -1;                   // VmHWM: the peak over the process's whole life
  int64_t net_rx_bytes = -1, net_tx_bytes = -1;  // all interfaces but lo
  int64_t lo_rx_bytes = -1, lo_tx_bytes = -1;    // loopback
  int64_t disk_read_bytes = -1, disk_write_bytes = -1;
  OsCounters os;
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
  OsCounters os;  // the last sample's
  // A few lines: "cpu 97.1 % mean (max 180.3 %), rss 412.0 MB (peak 530.2 MB), ...".
  std::string to_string() const;
};

struct ResourceSamplerOptions {
  double interval_s = 1.0;          // background period; <= 0: only explicit sample() calls
  std::string proc_root = "/proc";  // tests point this at a fake tree
  std::string cgroup_root = "";     // prefixed to the cgroup mount points of proc_root/self/mounts (tests)
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
    std::optional<OsCounters> usage;  // getrusage's four counts
    std::optional<CpuThrottle> throttle;
  };
  Raw read_raw() const;
  void loop();

  ResourceSamplerOptions opts_;
  double ticks_per_s_;
  std::string throttle_stat_;  // cpu.stat of the nearest cgroup with a CPU quota; "" when none
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
