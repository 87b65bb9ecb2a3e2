// Parsers for /proc/self/stat, /proc/self/status, /proc/net/dev, /proc/self/io, and the
// cgroup files that say whether this process's CPU is throttled (cgroups(7)).
// Plain string scanning: no regex, no exceptions escape (malformed text → nullopt).
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include <ddl/report/proc_parse.h>

namespace ddl::report {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> to_int(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\n') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Calls fn(line) for each line of text.
template <typename Fn>
void for_each_line(std::string_view text, Fn fn) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Calls fn(item) for each `sep`-separated item of text.
template <typename Fn>
void for_each_item(std::string_view text, char sep, Fn fn) {
  while (true) {
    size_t at = text.find(sep);
    fn(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
}

// "Key:   value [kB]" → value (times 1024 when the unit is kB).
std::optional<int64_t> keyed_value(std::string_view line, std::string_view key) {
  if (line.substr(0, key.size()) != key || line.size() <= key.size() || line[key.size()] != ':') return std::nullopt;
  auto fields = split_ws(line.substr(key.size() + 1));
  if (fields.empty()) return std::nullopt;
  auto v = to_int(fields[0]);
  if (v && fields.size() > 1 && (fields[1] == "kB" || fields[1] == "KB")) *v *= 1024;
  return v;
}

}  // namespace

std::optional<int64_t> parse_stat_cpu_ticks(std::string_view text) {
  size_t paren = text.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  // After ')' come field 3 (state) onwards: utime is field 14, stime field 15.
  auto fields = split_ws(text.substr(paren + 1));
  if (fields.size() < 13) return std::nullopt;
  auto utime = to_int(fields[11]), stime = to_int(fields[12]);
  if (!utime || !stime) return std::nullopt;
  return *utime + *stime;
}

std::optional<MemoryCounters> parse_status_memory(std::string_view text) {
  MemoryCounters m;
  for_each_line(text, [&](std::string_view line) {
    if (auto v = keyed_value(line, "VmRSS")) m.rss_bytes = *v;
    if (auto v = keyed_value(line, "VmHWM")) m.peak_rss_bytes = *v;
  });
  if (m.rss_bytes < 0 && m.peak_rss_bytes < 0) return std::nullopt;
  return m;
}

std::optional<NetCounters> parse_net_dev(std::string_view text) {
  // Two header lines, then "  name: rx_bytes rx_packets ... (8 rx fields) tx_bytes ...".
  NetCounters n;
  bool any = false;
  for_each_line(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    auto name = trim(line.substr(0, colon));
    if (name.empty() || name.find('|') != std::string_view::npos) return;
    auto fields = split_ws(line.substr(colon + 1));
    if (fields.size() < 9) return;
    auto rx = to_int(fields[0]), tx = to_int(fields[8]);
    if (!rx || !tx) return;
    any = true;
    if (name == "lo") {
      n.lo_rx_bytes += *rx;
      n.lo_tx_bytes += *tx;
    } else {
      n.rx_bytes += *rx;
      n.tx_bytes += *tx;
    }
  });
  if (!any) return std::nullopt;
  return n;
}

std::optional<IoCounters> parse_proc_io(std::string_view text) {
  std::optional<int64_t> rchar, wchar, rbytes, wbytes;
  for_each_line(text, [&](std::string_view line) {
    if (auto v = keyed_value(line, "rchar")) rchar = v;
    if (auto v = keyed_value(line, "wchar")) wchar = v;
    if (auto v = keyed_value(line, "read_bytes")) rbytes = v;
    if (auto v = keyed_value(line, "write_bytes")) wbytes = v;
  });
  if (rbytes && wbytes) return IoCounters{*rbytes, *wbytes, true};
  if (rchar && wchar) return IoCounters{*rchar, *wchar, false};
  return std::nullopt;
}

CgroupPaths parse_proc_cgroup(std::string_view text) {
  CgroupPaths p;
  for_each_line(text, [&](std::string_view line) {
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) return;
    const std::string_view id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    const std::string path(trim(line.substr(b + 1)));
    if (id == "0" && controllers.empty()) {
      p.v2 = path;
      return;
    }
    for_each_item(controllers, ',', [&](std::string_view c) {
      if (c == "cpu") p.v1_cpu = path;
    });
  });
  return p;
}

CgroupMounts parse_cgroup_mounts(std::string_view text) {
  // "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0", "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu,cpuacct 0 0"
  CgroupMounts m;
  for_each_line(text, [&](std::string_view line) {
    auto f = split_ws(line);
    if (f.size() < 4) return;
    if (f[2] == "cgroup2" && m.v2.empty()) m.v2 = std::string(f[1]);
    if (f[2] == "cgroup" && m.v1_cpu.empty())
      for_each_item(f[3], ',', [&](std::string_view o) {
        if (o == "cpu") m.v1_cpu = std::string(f[1]);
      });
  });
  return m;
}

std::optional<bool> parse_cpu_quota(std::string_view text) {
  auto f = split_ws(text);
  if (f.empty()) return std::nullopt;
  if (f[0] == "max") return false;
  auto v = to_int(f[0]);
  if (!v) return std::nullopt;
  return *v >= 0;  // v1 writes -1 for none
}

std::optional<CpuThrottle> parse_cgroup_cpu_stat(std::string_view text) {
  std::optional<int64_t> n, us, ns;
  for_each_line(text, [&](std::string_view line) {
    auto f = split_ws(line);
    if (f.size() != 2) return;
    if (f[0] == "nr_throttled") n = to_int(f[1]);
    if (f[0] == "throttled_usec") us = to_int(f[1]);
    if (f[0] == "throttled_time") ns = to_int(f[1]);
  });
  if (!n || !(us || ns)) return std::nullopt;
  return CpuThrottle{*n, us ? *us : *ns / 1000};
}

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

}  // namespace ddl::report
