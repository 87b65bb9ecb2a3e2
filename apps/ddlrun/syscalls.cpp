// Reading `strace -c` summaries and merging them into one table (see syscalls.h).
#include "apps/ddlrun/syscalls.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ddl::launcher {

std::string find_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string find_strace() { return find_in_path("strace"); }

std::vector<std::string> strace_prefix(const std::string& strace, const std::string& setpriv, const std::string& file) {
  std::vector<std::string> prefix = {strace, "-f", "-c", "-o", file, "--"};
  // The worker's PR_SET_PDEATHSIG reaches strace only; killed, strace detaches the program
  // (ptrace(2)), which would run on. setpriv(1) --pdeathsig gives the program its own, tied
  // to strace. (strace 6.1, Debian 12's, has no --kill-on-exit.)
  if (!setpriv.empty()) prefix.insert(prefix.end(), {setpriv, "--pdeathsig", "KILL", "--"});
  return prefix;
}

std::map<std::string, long long> read_strace_summary(const std::string& file) {
  // % time     seconds  usecs/call     calls    errors syscall
  // ------ ----------- ----------- --------- --------- ----------------
  //  45.00    0.000123          12        10           futex
  // The errors column may be empty; calls is always the fourth field, the name the last.
  std::map<std::string, long long> counts;
  std::ifstream in(file);
  bool table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("------", 0) == 0) {
      table = true;
      continue;
    }
    if (!table) continue;
    std::istringstream f(line);
    std::vector<std::string> fields;
    for (std::string w; f >> w;) fields.push_back(w);
    if (fields.size() < 5 || fields.back() == "total") continue;
    char* end = nullptr;
    const long long calls = std::strtoll(fields[3].c_str(), &end, 10);
    if (end && *end == '\0') counts[fields.back()] += calls;
  }
  return counts;
}

namespace {
std::string grouped(long long n) {  // 1234567 -> "1,234,567"
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}
}  // namespace

std::string syscall_table(const std::vector<std::pair<int, std::map<std::string, long long>>>& per_rank, int top) {
  std::map<std::string, long long> all;
  for (const auto& [rank, counts] : per_rank)
    for (const auto& [name, n] : counts) all[name] += n;
  std::vector<std::pair<std::string, long long>> order(all.begin(), all.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const size_t shown = std::min(order.size(), static_cast<size_t>(std::max(top, 0)));
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"syscall"};
  for (const auto& [rank, counts] : per_rank) header.push_back("rank " + std::to_string(rank));
  header.push_back("all ranks");
  rows.push_back(header);
  auto row_of = [&](const std::string& label, auto&& count_of) {
    std::vector<std::string> row{label};
    long long sum = 0;
    for (const auto& [rank, counts] : per_rank) {
      const long long n = count_of(counts);
      sum += n;
      row.push_back(grouped(n));
    }
    row.push_back(grouped(sum));
    rows.push_back(row);
  };
  for (size_t i = 0; i < shown; ++i)
    row_of(order[i].first, [&](const std::map<std::string, long long>& c) {
      const auto it = c.find(order[i].first);
      return it == c.end() ? 0LL : it->second;
    });
  if (shown < order.size())
    row_of("(" + std::to_string(order.size() - shown) + " others)", [&](const std::map<std::string, long long>& c) {
      long long n = 0;
      for (size_t i = shown; i < order.size(); ++i)
        if (const auto it = c.find(order[i].first); it != c.end()) n += it->second;
      return n;
    });
  row_of("total", [](const std::map<std::string, long long>& c) {
    long long n = 0;
    for (const auto& [name, k] : c) n += k;
    return n;
  });
  std::vector<size_t> width(header.size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      const std::string pad(width[c] - r[c].size(), ' ');
      out += c == 0 ? r[c] + pad : "  " + pad + r[c];
    }
    out += "\n";
  }
  return out;
}

}  // namespace ddl::launcher
