// StepTimer: splits each training step's wall time into phases (data, forward, backward,
// communication wait, optimizer) and accumulates per-epoch and whole-run totals and means.
// Means exclude the first step of each epoch (warm-up: allocation, caches, lazy init).
// StepTimer() uses the host clock. StepTimer(device) times each phase with marks on the
// device (tensor/core/device_timer.h): on a GPU, its time between the phase's boundaries, with
// no sync of its own; those steps are counted once resolve() reads them, after a sync.
// Not thread-safe: one timer per training loop. While trace::enabled(), each phase and
// each step is also a span on the calling thread's track ("phase" category; host times).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <ddl/tensor/core/device_timer.h>

namespace ddl::report {

enum class Phase : uint8_t { Data, Forward, Backward, CommWait, Optimizer };
inline constexpr int kNumPhases = 5;
const char* phase_name(Phase p);  // "data", "forward", "backward", "comm_wait", "optimizer"

struct StepTimes {
  std::array<double, kNumPhases> phase_s{};  // seconds per phase, indexed by Phase
  double total_s = 0;                        // begin_step() .. end_step()
  double phase(Phase p) const { return phase_s[static_cast<int>(p)]; }
  double other_s() const;  // total minus the phases: logging, metrics, ...
};

struct EpochTimes {
  int64_t steps = 0;
  StepTimes total;         // sums over every step
  StepTimes mean;          // over steps after the first (over all when there is just one)
  int64_t mean_steps = 0;  // how many steps `mean` averages
  double wall_s = 0;       // begin_epoch() .. end_epoch() (or now): includes time between steps
};

class StepTimer {
 public:
  StepTimer();
  // Phases timed on `clock`'s device: see Note [Device clock] in step_timer.cpp.
  explicit StepTimer(Device clock);
  bool device_clock() const { return device_clock_; }

  // Starts an epoch: the next step is its first (left out of means).
  void begin_epoch();
  // Starts a step. start() begins one itself when none is open.
  void begin_step();
  // Ends the running phase (if any) and starts `p`: each instant counts for one phase.
  void start(Phase p);
  // Ends the running phase; the time until the next start() is "other".
  void stop();
  // Moves up to `seconds` of the open step's already-closed time from one phase to another
  // (never below 0): communication that ran inside backward (DDP hooks) is comm_wait.
  // On a device clock the move is made when the step is resolved.
  void move_time(Phase from, Phase to, double seconds);
  // Closes the step (and its running phase) and returns its times. On a device clock it
  // returns {} and queues the step for resolve().
  StepTimes end_step();
  // Device clock: reads and counts the queued steps, oldest first, and returns their
  // times (the last is then last_step()). Call after a host sync that covers them, or
  // this waits for the device. Host clock: returns {} (steps count in end_step).
  std::vector<StepTimes> resolve();
  // Steps closed but not yet resolved.
  int64_t pending() const { return static_cast<int64_t>(pending_.size()); }
  // Drops the open step uncounted (last_step() is again the last one closed). For a step
  // opened ahead of its data, when none came: a loop starts each batch's data phase at the
  // end of the previous step, so the wait that finds the loader exhausted has no batch.
  void discard_step();
  // The current epoch so far (resolved steps); end_epoch() also closes it (and an open
  // step) and resolves what is queued.
  EpochTimes epoch() const;
  EpochTimes end_epoch();
  // Every step of the run; means exclude each epoch's first step.
  EpochTimes run() const;
  // The step being timed (or the last one closed).
  const StepTimes& last_step() const { return step_; }

  // RAII phase: starts `p`; on exit returns to the enclosing scope's phase, or stops when
  // there is none (a phase begun by start() is not resumed). Scopes nest:
  // Backward { CommWait { } } counts the wait once, as comm_wait, not as backward.
  class Scope {
   public:
    Scope(StepTimer& t, Phase p);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StepTimer& timer_;
    int previous_;  // the enclosing scope's Phase, or -1
  };
  Scope scope(Phase p) { return Scope(*this, p); }

 private:
  using Clock = std::chrono::steady_clock;
  void close_phase(Clock::time_point now);
  void add_step(const StepTimes& s);
  void mark(int phase);  // device clock: `phase` (-1: none) starts here

  bool device_clock_ = false;
  Device clock_;
  struct Mark {
    int phase;  // the Phase that starts at `at`, or -1
    DeviceMark at;
  };
  struct Move {
    Phase from, to;
    double seconds;
  };
  struct Queued {
    std::vector<Mark> marks;  // from the step's start to its end
    std::vector<Move> moves;
  };
  Queued open_;                  // the open step's, on a device clock
  std::vector<Queued> pending_;  // closed, not yet resolved

  bool in_step_ = false;
  int phase_ = -1;        // running Phase, or -1
  int scope_phase_ = -1;  // innermost Scope's Phase, or -1
  Clock::time_point step_start_, phase_start_, epoch_start_;
  bool epoch_open_ = false;
  StepTimes step_, closed_;  // the open (or last) step; the last step closed
  // Sums over all steps and over steps after each epoch's first, for this epoch and the run.
  struct Acc {
    int64_t steps = 0, counted = 0;
    StepTimes all, later;
    double wall_s = 0;
  };
  Acc epoch_, run_;
  static EpochTimes finish(const Acc& a);
};

}  // namespace ddl::report
