// Parsers for /proc/self/stat, /proc/self/status, /proc/net/dev and /proc/self/io.
// Plain string scanning: no regex, no exceptions escape (malformed text → nullopt).
#include "report/proc_parse.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

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

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

}  // namespace ddl::report
