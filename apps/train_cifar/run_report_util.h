// Small formatting and clock helpers shared by RunReport's two files (run_report.cpp: the
// header, steps and epochs; run_report_results.cpp: evaluation, the summary and the page).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ddl::apps::run_report_detail {

// printf of up to four doubles.
inline std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}
inline double pct(int64_t part, int64_t whole) { return 100.0 * double(part) / double(std::max<int64_t>(whole, 1)); }
inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace ddl::apps::run_report_detail
