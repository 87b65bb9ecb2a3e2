// ddlrun's side of the flight recorder (dist/flight/recorder.h): the folder each attempt's
// ranks dump into (DDL_FLIGHT_DIR), the SIGUSR2 round when the first rank fails (every rank
// still running is asked to dump before it is stopped, so a frozen one shows as the one that
// did not answer), and the verdict (verdict.h) printed and written at the end of a failed job.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "apps/ddlrun/verdict.h"

namespace ddl::launcher {

// The job's folder for dumps: LOG_DIR/flight with --log-dir, else a fresh /tmp/ddlrun-flight.*
// (`*made`: its path, for main to remove at the end). "" when
// DDL_FLIGHT_RECORDER=0 or the folder cannot be made.
std::string flight_base(const std::string& log_dir, std::string* made);

// The parts of Cluster::failure_note ("; host1's link is down (...); ...") that speak of `host`.
std::string host_note(const std::string& failure_note, const std::string& host);

class FlightWatch {
 public:
  // `base` "": off. Otherwise the attempt's dumps go to base/attempt<N> (made 0700 here).
  FlightWatch(const std::string& base, int attempt, int nworkers);
  bool on() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // Sends SIGUSR2 (through `send(pid)`) to each running worker (pids[i] > 0) whose rank
  // armed its recorder (DIR/rank<r>.armed: it handles SIGUSR2, whose default action would end
  // it), and opens a window of `window` for their dumps. The signal goes to the process that
  // armed (its pid is in the marker) when that is the worker or one of its descendants (a
  // worker may be a wrapper script, which SIGUSR2 would end). Returns false when nobody was
  // asked (stop at once, then).
  template <class Send>
  bool ask(std::vector<pid_t> pids, const std::vector<int>& ranks, Send send, std::chrono::milliseconds window) {
    if (!on()) return false;
    for (size_t i = 0; i < pids.size(); ++i) pids[i] = pids[i] > 0 ? armed_pid(ranks[i], pids[i]) : 0;
    open_window(pids, window);
    bool any = false;
    for (size_t i = 0; i < pids.size(); ++i)
      if (pids[i] > 0) send(pids[i]), any = true;
    asking_ = any;
    return any;
  }
  bool asking() const { return asking_; }
  // During the window: notes who has dumped since; true once it is over (everyone asked
  // answered or exited, or the time is up), and then it closes.
  bool window_over(const std::vector<int>& ranks, const std::vector<bool>& running);
  bool asked(size_t i) const { return asked_[i]; }
  bool answered(size_t i) const { return answered_[i]; }

  // Reads the dumps, decides, writes the verdict to `path` (when not "") and returns its text.
  std::string verdict(std::vector<RankFacts> facts, const std::string& path) const;

 private:
  // The process of `rank` that armed its recorder, if it is `worker` or a descendant; else 0.
  pid_t armed_pid(int rank, pid_t worker) const;
  void open_window(const std::vector<pid_t>& pids, std::chrono::milliseconds window);
  std::string dir_;
  bool asking_ = false;
  std::chrono::steady_clock::time_point until_;
  int64_t asked_at_ns_ = 0;  // wall clock, as the dumps' file times
  std::vector<bool> asked_, answered_;
};

}  // namespace ddl::launcher
