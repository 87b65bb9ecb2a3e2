// The end-of-run per-rank table: each rank packs its summary into a fixed vector of
// doubles, rank 0 collects them with one all_gather (float64) and prints two aligned
// tables, resources, OS figures and per-step times, one row per rank plus a mean row. NaN = n/a.
// It does not sample anything itself: feed it ResourceSampler, StepTimer and CommStats.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <ddl/dist/process_group.h>
#include <ddl/report/step_timer.h>
#include <ddl/report/worker_metrics.h>

namespace ddl::report {

// The fields, in wire order. Adding one changes the vector every rank sends: all ranks
// must run the same build.
enum class RankField : int {
  MeanCpuPercent,
  PeakRssMB,
  PgSentMB,
  PgRecvMB,
  NetRxMB,
  NetTxMB,
  LoRxMB,
  LoTxMB,
  DiskReadMB,
  DiskWriteMB,
  DiskSource,  // DiskSource: 0 storage, 1 rchar/wchar, NaN n/a
  DataMs,
  ForwardMs,
  BackwardMs,
  CommWaitMs,
  OptimizerMs,
  StepMs,
  ConvergenceS,
  FinalAccuracyPct,
  WallS,
  // See Note [OS counters] in worker_metrics.h.
  VoluntarySwitches,
  InvoluntarySwitches,
  MinorFaults,
  MajorFaults,
  ThrottledPeriods,
  ThrottledMs,
  TensorAllocatedMB,
  TensorReservedMB,
  TensorPeakMB,
};
inline constexpr int kNumRankFields = 29;

struct RankSummary {
  std::array<double, kNumRankFields> values;
  RankSummary();  // all NaN
  double& operator[](RankField f) { return values[static_cast<int>(f)]; }
  double operator[](RankField f) const { return values[static_cast<int>(f)]; }
};

// Fills a summary. comm: the process group's counters (null: n/a); times: StepTimer::run()
// (means exclude each epoch's first step); final_accuracy_pct in percent (0-100);
// convergence_s and final_accuracy_pct NaN when unknown; wall_s: the run's wall time.
RankSummary make_rank_summary(const ResourceSummary& res, const EpochTimes& times, const dist::CommStats* comm,
                              double convergence_s, double final_accuracy_pct, double wall_s);

// Every rank's summary, rank 0 first. A collective when pg is non-null and has more than
// one rank: every rank must call it. Null pg: {mine}.
std::vector<RankSummary> gather_rank_summaries(const RankSummary& mine, dist::ProcessGroup* pg);

// The three tables as text (units in the headers).
std::string format_rank_table(const std::vector<RankSummary>& ranks);

// gather_rank_summaries, then rank 0 prints format_rank_table to `os`; other ranks print
// nothing. Collective, as above.
void print_rank_table(const RankSummary& mine, dist::ProcessGroup* pg, std::ostream& os);

// Time to reach a target accuracy, in percent: record(elapsed, accuracy_pct) after each
// evaluation; time_s() is the elapsed time of the first record at or above the target,
// NaN before that or when no target was given (target <= 0).
class ConvergenceTracker {
 public:
  explicit ConvergenceTracker(double target_accuracy_pct = 0) : target_(target_accuracy_pct) {}
  void record(double elapsed_s, double accuracy_pct);
  double time_s() const { return time_s_; }
  double target() const { return target_; }

 private:
  double target_;
  double time_s_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace ddl::report
