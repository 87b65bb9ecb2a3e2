// ProgressBar: one self-redrawing line "label [#####.....] 45/100 45% 0:12<0:15 status"
// with elapsed time and ETA. By default it draws when DDL_PROGRESS=1 (ddlrun sets it for
// rank 0 on a terminal), never when DDL_PROGRESS=0, else when stdout is a terminal, so
// logs and pipes stay clean. It is not a logger: println() keeps log lines and the bar
// from overwriting each other, and prints the line even when the bar is off.
#pragma once

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

namespace ddl::report {

// The bar's text for `done` of `total` after `elapsed_s`. `start`: items already done when
// the clock started (a resumed run); the ETA extrapolates from the done - start items of
// elapsed_s alone, and is "?" until one of them is done.
std::string format_progress(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                            const std::string& status = "", int bar_width = 30, int64_t start = 0);
// "1:05", "1:02:03".
std::string format_duration(double seconds);
// A training bar's status: "loss 0.532, 1234 img/s, slowest rank 0.123 s/step"; a value
// that is not finite (not measured yet, or one rank) is left out.
std::string format_train_status(double loss, double images_per_s, double slowest_step_s);
// Whether a bar with enabled = -1 draws: DDL_PROGRESS "1" yes, "0" no, else `is_terminal`.
bool progress_wanted(const char* ddl_progress_env, bool is_terminal);

class ProgressBar {
 public:
  // enabled: 1 draw, 0 never, -1 progress_wanted(DDL_PROGRESS, isatty(stdout)).
  // `out` must outlive the bar.
  explicit ProgressBar(int64_t total, std::string label = "", int enabled = -1, std::ostream& out = std::cout);
  ~ProgressBar();  // finish()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool enabled() const { return enabled_; }
  // `done` items were done before now (a run resumed mid-epoch skipped them): the bar
  // starts there and its clock restarts, so elapsed time and ETA count only later items.
  void start_at(int64_t done);
  // Sets progress; redraws at most every 100 ms, and always at the last item.
  void update(int64_t done, const std::string& status = "");
  // Clears the bar, writes `line` and a newline, redraws the bar.
  void println(const std::string& line);
  // Draws the final state and ends the line (idempotent).
  void finish();

 private:
  void draw();
  void clear();

  int64_t total_, done_ = 0, start_done_ = 0;
  std::string label_, status_;
  bool enabled_, drawn_ = false, finished_ = false;
  std::ostream& out_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace ddl::report
