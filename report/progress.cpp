// ProgressBar: carriage return + "erase line" (ESC [K) redraws; throttled to 10 Hz.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <ddl/report/progress.h>

namespace ddl::report {

std::string format_duration(double seconds) {
  if (!(seconds >= 0)) seconds = 0;  // NaN too
  auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return buf;
}

std::string format_progress(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                            const std::string& status, int bar_width, int64_t start) {
  double frac = total > 0 ? std::clamp(static_cast<double>(done) / total, 0.0, 1.0) : 0.0;
  int filled = static_cast<int>(frac * bar_width);
  std::string s = label.empty() ? "" : label + " ";
  s += "[" + std::string(filled, '#') + std::string(bar_width - filled, '.') + "] ";
  s += std::to_string(done) + "/" + std::to_string(total) + " ";
  char pct[16];
  std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(frac * 100));
  s += pct;
  const int64_t timed = done - start;  // items done since the clock started
  std::string eta =
      timed > 0 && total > done ? format_duration(elapsed_s / static_cast<double>(timed) * (total - done)) : "?";
  if (done >= total) eta = "0:00";
  s += " " + format_duration(elapsed_s) + "<" + eta;
  if (!status.empty()) s += " " + status;
  return s;
}

std::string format_train_status(double loss, double images_per_s, double slowest_step_s) {
  std::string s;
  char buf[64];
  if (std::isfinite(loss)) std::snprintf(buf, sizeof buf, "loss %.4f", loss), s += buf;
  if (std::isfinite(images_per_s))
    std::snprintf(buf, sizeof buf, "%s%.0f img/s", s.empty() ? "" : ", ", images_per_s), s += buf;
  if (std::isfinite(slowest_step_s))
    std::snprintf(buf, sizeof buf, "%sslowest rank %.3f s/step", s.empty() ? "" : ", ", slowest_step_s), s += buf;
  return s;
}

bool progress_wanted(const char* env, bool is_terminal) {
  if (env && std::strcmp(env, "1") == 0) return true;
  if (env && std::strcmp(env, "0") == 0) return false;
  return is_terminal;
}

ProgressBar::ProgressBar(int64_t total, std::string label, int enabled, std::ostream& out)
    : total_(total),
      label_(std::move(label)),
      enabled_(enabled < 0 ? progress_wanted(std::getenv("DDL_PROGRESS"), isatty(STDOUT_FILENO) != 0) : enabled != 0),
      out_(out),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::start_at(int64_t done) {
  done_ = start_done_ = done;
  start_ = std::chrono::steady_clock::now();
}

void ProgressBar::update(int64_t done, const std::string& status) {
  done_ = done;
  status_ = status;
  if (!enabled_ || finished_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  draw();
}

void ProgressBar::draw() {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  out_ << '\r' << format_progress(label_, done_, total_, elapsed, status_, 30, start_done_) << "\033[K" << std::flush;
  drawn_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void ProgressBar::clear() {
  if (drawn_) out_ << "\r\033[K";
}

void ProgressBar::println(const std::string& line) {
  if (!enabled_ || finished_) {
    out_ << line << '\n' << std::flush;
    return;
  }
  clear();
  out_ << line << '\n';
  draw();
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw();
  out_ << '\n' << std::flush;
}

}  // namespace ddl::report
