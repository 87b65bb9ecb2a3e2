// Parsers for the /proc files the resource sampler reads. Each takes the file's text
// (so tests feed synthetic content) and returns std::nullopt, never throws, when the
// text lacks what it needs. They interpret nothing beyond the fields listed here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddl::report {

// /proc/self/stat: utime + stime (fields 14 and 15) in clock ticks. The command name
// (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
std::optional<int64_t> parse_stat_cpu_ticks(std::string_view text);

// /proc/self/status: VmRSS and VmHWM ("VmRSS:  12345 kB"), in bytes; -1 where absent.
struct MemoryCounters {
  int64_t rss_bytes = -1;
  int64_t peak_rss_bytes = -1;
};
std::optional<MemoryCounters> parse_status_memory(std::string_view text);

// /proc/net/dev: received and transmitted bytes summed over every interface except
// loopback, and loopback's alone (ranks on one machine talk over lo). These counters
// belong to the network namespace, not this process: other processes' traffic counts too.
struct NetCounters {
  int64_t rx_bytes = 0;
  int64_t tx_bytes = 0;
  int64_t lo_rx_bytes = 0;
  int64_t lo_tx_bytes = 0;
};
std::optional<NetCounters> parse_net_dev(std::string_view text);

// /proc/self/io. read_bytes/write_bytes are what reached the storage layer; rchar/wchar
// every byte through read()/write() (page-cache hits, pipes and sockets included).
// `storage` says which pair `read_bytes`/`write_bytes` hold: the first when present.
struct IoCounters {
  int64_t read_bytes = 0;
  int64_t write_bytes = 0;
  bool storage = true;
};
std::optional<IoCounters> parse_proc_io(std::string_view text);

// /proc/self/cgroup ("ID:controllers:path" per line; cgroups(7)): this process's cgroup
// in the v2 hierarchy ("0::/path") and in the v1 hierarchy that has the cpu controller
// ("4:cpu,cpuacct:/path"); "" where the text has no such line.
struct CgroupPaths {
  std::string v2;
  std::string v1_cpu;
};
CgroupPaths parse_proc_cgroup(std::string_view text);

// /proc/self/mounts: where the cgroup2 hierarchy and the v1 hierarchy with the cpu
// controller are mounted ("" when not).
struct CgroupMounts {
  std::string v2;
  std::string v1_cpu;
};
CgroupMounts parse_cgroup_mounts(std::string_view text);

// Whether a CPU quota is set: v2's cpu.max ("max 100000": none; "50000 100000": 50 ms
// per 100 ms) or v1's cpu.cfs_quota_us ("-1": none). nullopt when unreadable.
std::optional<bool> parse_cpu_quota(std::string_view text);

// cpu.stat of a cgroup: the periods in which its quota ran out (nr_throttled) and the
// time its threads waited for the next period, in microseconds (v2's throttled_usec;
// v1's throttled_time is in nanoseconds). nullopt when either is missing.
struct CpuThrottle {
  int64_t nr_throttled = 0;
  int64_t throttled_us = 0;
};
std::optional<CpuThrottle> parse_cgroup_cpu_stat(std::string_view text);

// Reads a whole (possibly size-0 /proc) file; nullopt when it cannot be opened.
std::optional<std::string> read_text_file(const std::string& path);

}  // namespace ddl::report
