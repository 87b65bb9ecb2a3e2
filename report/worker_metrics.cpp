// ResourceSampler: reads /proc through the parsers in proc_parse.h, turns counters into
// deltas since start, and keeps every sample (one a second is ~100 B: hours fit easily).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <ddl/report/worker_metrics.h>
#include <ddl/tensor/core/allocator.h>
#include <ddl/trace/thread_name.h>

namespace ddl::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Shorter intervals are too coarse for a max: utime/stime tick at 1/CLK_TCK (10 ms).
constexpr double kMinIntervalForMax = 0.2;

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// See Note [OS counters] in worker_metrics.h: this process's cgroup, walked up to the
// first that has a CPU quota; v2 first, then the v1 hierarchy with the cpu controller.
std::string find_throttle_stat(const ResourceSamplerOptions& o) {
  const auto cgroup = read_text_file(o.proc_root + "/self/cgroup");
  const auto mounts = read_text_file(o.proc_root + "/self/mounts");
  if (!cgroup || !mounts) return "";
  const CgroupPaths paths = parse_proc_cgroup(*cgroup);
  const CgroupMounts where = parse_cgroup_mounts(*mounts);
  const struct {
    const std::string& mount;
    const std::string& path;
    const char* quota_file;
  } kinds[] = {{where.v2, paths.v2, "cpu.max"}, {where.v1_cpu, paths.v1_cpu, "cpu.cfs_quota_us"}};
  for (const auto& k : kinds) {
    if (k.mount.empty() || k.path.empty() || k.path[0] != '/') continue;
    for (std::string p = k.path;; p = p.substr(0, std::max<size_t>(p.rfind('/'), 1))) {
      const std::string dir = o.cgroup_root + k.mount + (p == "/" ? "" : p);
      const auto quota = read_text_file(dir + "/" + k.quota_file);
      if (quota && parse_cpu_quota(*quota).value_or(false)) return dir + "/cpu.stat";
      if (p == "/") break;
    }
  }
  return "";
}

std::optional<OsCounters> read_rusage() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return std::nullopt;
  OsCounters c;
  c.voluntary_switches = u.ru_nvcsw;
  c.involuntary_switches = u.ru_nivcsw;
  c.minor_faults = u.ru_minflt;
  c.major_faults = u.ru_majflt;
  return c;
}

}  // namespace

const char* disk_source_name(DiskSource s) {
  switch (s) {
    case DiskSource::Storage:
      return "read_bytes/write_bytes";
    case DiskSource::Syscalls:
      return "rchar/wchar";
    case DiskSource::None:
      return "n/a";
  }
  return "?";
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  return buf;
}

std::string ResourceSummary::to_string() const {
  auto pct = [](double v) {
    if (std::isnan(v)) return std::string("n/a");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", v);
    return std::string(buf);
  };
  std::string s = "cpu " + pct(mean_cpu_percent) + " mean (max " + pct(max_cpu_percent) + "), rss " +
                  format_bytes(last_rss_bytes) + " (peak " + format_bytes(peak_rss_bytes) + ")\n";
  s += "network rx " + format_bytes(net_rx_bytes) + ", tx " + format_bytes(net_tx_bytes) + "; loopback rx " +
       format_bytes(lo_rx_bytes) + ", tx " + format_bytes(lo_tx_bytes) + " (host-wide counters)\n";
  s += "disk read " + format_bytes(disk_read_bytes) + ", written " + format_bytes(disk_write_bytes) + " (" +
       disk_source_name(disk_source) + ")\n";
  auto count = [](int64_t v) { return v < 0 ? std::string("n/a") : std::to_string(v); };
  s += "context switches " + count(os.voluntary_switches) + " voluntary, " + count(os.involuntary_switches) +
       " involuntary; page faults " + count(os.minor_faults) + " minor, " + count(os.major_faults) +
       " major; cgroup throttled " + count(os.throttled_periods) + " periods, " +
       (os.throttled_us < 0 ? std::string("n/a") : std::to_string(os.throttled_us / 1000) + " ms") + "\n";
  s += "tensor allocator: allocated " + format_bytes(os.allocated_bytes) + ", reserved " +
       format_bytes(os.reserved_bytes) + ", peak allocated " + format_bytes(os.peak_allocated_bytes) + "\n";
  return s;
}

ResourceSampler::ResourceSampler(ResourceSamplerOptions opts) : opts_(std::move(opts)) {
  long tck = sysconf(_SC_CLK_TCK);
  ticks_per_s_ = tck > 0 ? static_cast<double>(tck) : 100.0;
  throttle_stat_ = find_throttle_stat(opts_);  // a process does not change cgroups mid-run
  start_ = last_ = read_raw();
  if (start_.io) disk_source_ = start_.io->storage ? DiskSource::Storage : DiskSource::Syscalls;
  if (opts_.interval_s > 0)
    thread_ = std::thread([this] {
      trace::set_os_thread_name("metrics");
      loop();
    });
}

ResourceSampler::~ResourceSampler() { stop(); }

void ResourceSampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ResourceSampler::loop() {
  auto period = std::chrono::duration<double>(opts_.interval_s);
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stopping_; })) {
    lock.unlock();
    sample();
    lock.lock();
  }
}

ResourceSampler::Raw ResourceSampler::read_raw() const {
  Raw r;
  r.when = std::chrono::steady_clock::now();
  const std::string& root = opts_.proc_root;
  if (auto t = read_text_file(root + "/self/stat")) r.cpu_ticks = parse_stat_cpu_ticks(*t);
  if (auto t = read_text_file(root + "/self/status")) r.mem = parse_status_memory(*t);
  if (auto t = read_text_file(root + "/net/dev")) r.net = parse_net_dev(*t);
  if (auto t = read_text_file(root + "/self/io")) r.io = parse_proc_io(*t);
  r.usage = read_rusage();
  if (!throttle_stat_.empty())
    if (auto t = read_text_file(throttle_stat_)) r.throttle = parse_cgroup_cpu_stat(*t);
  return r;
}

ResourceSample ResourceSampler::sample() {
  std::lock_guard<std::mutex> order(sample_mu_);
  Raw now = read_raw();
  std::lock_guard<std::mutex> lock(mu_);
  ResourceSample s;
  s.time_s = seconds_between(start_.when, now.when);
  double dt = seconds_between(last_.when, now.when);
  s.cpu_percent = kNaN;
  if (now.cpu_ticks && last_.cpu_ticks && dt > 1e-3)
    s.cpu_percent = 100.0 * (*now.cpu_ticks - *last_.cpu_ticks) / ticks_per_s_ / dt;
  if (!std::isnan(s.cpu_percent) && dt >= kMinIntervalForMax) max_cpu_ = std::max(max_cpu_, s.cpu_percent);
  if (now.mem) {
    s.rss_bytes = now.mem->rss_bytes;
    s.peak_rss_bytes = std::max(now.mem->peak_rss_bytes, now.mem->rss_bytes);
    peak_rss_ = std::max(peak_rss_, s.peak_rss_bytes);
  }
  if (now.net && start_.net) {
    s.net_rx_bytes = now.net->rx_bytes - start_.net->rx_bytes;
    s.net_tx_bytes = now.net->tx_bytes - start_.net->tx_bytes;
    s.lo_rx_bytes = now.net->lo_rx_bytes - start_.net->lo_rx_bytes;
    s.lo_tx_bytes = now.net->lo_tx_bytes - start_.net->lo_tx_bytes;
  }
  // Deltas only between readings of the same kind (see DiskSource).
  if (now.io && start_.io && now.io->storage == start_.io->storage) {
    s.disk_read_bytes = now.io->read_bytes - start_.io->read_bytes;
    s.disk_write_bytes = now.io->write_bytes - start_.io->write_bytes;
  }
  if (now.usage && start_.usage) {
    s.os.voluntary_switches = now.usage->voluntary_switches - start_.usage->voluntary_switches;
    s.os.involuntary_switches = now.usage->involuntary_switches - start_.usage->involuntary_switches;
    s.os.minor_faults = now.usage->minor_faults - start_.usage->minor_faults;
    s.os.major_faults = now.usage->major_faults - start_.usage->major_faults;
  }
  if (now.throttle && start_.throttle) {
    s.os.throttled_periods = now.throttle->nr_throttled - start_.throttle->nr_throttled;
    s.os.throttled_us = now.throttle->throttled_us - start_.throttle->throttled_us;
  }
  const MemoryStats m = cpu::memory_stats();
  s.os.allocated_bytes = m.allocated_bytes;
  s.os.reserved_bytes = m.reserved_bytes;
  s.os.peak_allocated_bytes = m.peak_allocated_bytes;
  last_ = now;
  samples_.push_back(s);
  return s;
}

std::vector<ResourceSample> ResourceSampler::take_new_samples() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ResourceSample> out(samples_.begin() + static_cast<std::ptrdiff_t>(taken_), samples_.end());
  taken_ = samples_.size();
  return out;
}

std::vector<ResourceSample> ResourceSampler::samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

ResourceSummary ResourceSampler::summary() {
  ResourceSample last = sample();
  std::lock_guard<std::mutex> lock(mu_);
  ResourceSummary sum;
  sum.duration_s = last.time_s;
  sum.samples = static_cast<int64_t>(samples_.size());
  sum.mean_cpu_percent = kNaN;
  if (start_.cpu_ticks && last_.cpu_ticks && sum.duration_s > 1e-3)
    sum.mean_cpu_percent = 100.0 * (*last_.cpu_ticks - *start_.cpu_ticks) / ticks_per_s_ / sum.duration_s;
  // A run shorter than one long-enough interval has no max of its own: use the mean.
  sum.max_cpu_percent = max_cpu_ >= 0 ? std::max(max_cpu_, sum.mean_cpu_percent) : sum.mean_cpu_percent;
  sum.last_rss_bytes = last.rss_bytes;
  sum.peak_rss_bytes = peak_rss_;
  sum.net_rx_bytes = last.net_rx_bytes;
  sum.net_tx_bytes = last.net_tx_bytes;
  sum.lo_rx_bytes = last.lo_rx_bytes;
  sum.lo_tx_bytes = last.lo_tx_bytes;
  sum.disk_read_bytes = last.disk_read_bytes;
  sum.disk_write_bytes = last.disk_write_bytes;
  sum.disk_source = last.disk_read_bytes >= 0 ? disk_source_ : DiskSource::None;
  sum.os = last.os;
  return sum;
}

}  // namespace ddl::report
