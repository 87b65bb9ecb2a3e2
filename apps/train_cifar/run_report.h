// What train_cifar prints and records: the per-rank header, step logs (loss,
// batch accuracy, batch time), epoch summaries, test results with the
// classification report and confusion matrix, the per-worker metrics table,
// the JSON lines of --metrics and the --report HTML file. Every line is prefixed
// "[rank r/N]" (by ddlrun, or here when run alone); only rank 0 prints evaluation
// results and the final tables and writes the report. Accuracy is shown in percent.
// A restarted or resuming run appends to its metrics file. On a GPU, step times are GPU
// time (StepTimer's Note [Device clock]) and a step's loss and accuracy are read only
// when something shows them: see Note [Deferred reads] in run_report.cpp.
// run_report.cpp: the header, steps and epochs; run_report_results.cpp: the rest.
#pragma once

#include <chrono>
#include <fstream>
#include <limits>
#include <memory>

#include "apps/train_cifar/datasets.h"
#include "apps/train_cifar/evaluate.h"
#include "apps/train_cifar/live_pace.h"
#include "apps/train_cifar/options.h"
#include <ddl/dist/sync/strategy.h>
#include <ddl/report/classification_report.h>
#include <ddl/report/metrics_log.h>
#include <ddl/report/progress.h>
#include <ddl/report/rank_table.h>
#include <ddl/report/step_timer.h>
#include <ddl/report/training_report.h>
#include <ddl/report/worker_metrics.h>

namespace ddl::apps {

// Note [Control group]
// The bytes train_cifar reports as the sync strategy's (pg_bytes_*, pg_ops, the per-rank
// table, sync_study's columns) are the training group's counters. Everything else the run
// communicates goes over a second group of the same ranks, the control group
// (dist::new_group_beside_default): the report's slowest-rank exchange and epoch totals,
// the per-rank table's gather, evaluation's sums, BatchNorm buffers before evaluation and
// the snapshot agreement and transfer on resume. So the training group's counters are the
// strategy's by construction (its initial broadcast of rank 0's weights included, as it is
// the strategy's), as with torch.distributed.new_group for side traffic in PyTorch.

class RunReport {
 public:
  // `group`: the training group (whose counters are reported as the strategy's traffic);
  // `control`: the control group for the report's own collectives (null: `group`).
  // `device`: the training device; on a GPU the step phases are timed on it.
  RunReport(const TrainOptions& o, const DataSplits& splits, dist::ProcessGroup* group, dist::ProcessGroup* control,
            const nn::Module& model, int64_t batches_per_epoch, Device device);

  report::StepTimer& timer() { return timer_; }
  // Once the sync strategy exists: DDP's bucket sizes, where they came from, and the
  // buckets they made (a "ddp_buckets" metrics line). Nothing for other strategies.
  void strategy_made(dist::SyncStrategy& strategy);
  // Says where training resumes from a snapshot, and logs it: the "resume" line that
  // marks where this run's metrics continue the interrupted run's. Rank 0 also prints
  // `note` (how the ranks came to agree on the snapshot) when it is not empty.
  void resumed(const std::string& snapshot, int64_t epoch, int64_t step_in_epoch, int64_t global_step,
               const std::string& note = {});
  // Opens the first step: its data phase starts here.
  void start_epoch(int64_t epoch);
  // A run resumed mid-epoch skipped the epoch's first `step` batches: the first step's
  // data phase, the progress bar's clock and the images/s clock restart here, and the bar
  // starts at `step`. Does nothing for step 0.
  void start_at_step(int64_t step);
  // After the optimizer step: exchanges the slowest rank's step time (when due), closes the
  // step's timing, logs every --log-every steps, and opens the next step's data phase.
  // loss: the step's mean loss, one element, on the training device. comm: the sync
  // strategy's communication in this step; on the CPU what ran inside forward, backward
  // and step() moves from those phases to comm_wait (host times: not on a GPU clock).
  void end_step(int64_t step, const Tensor& loss, const Tensor& logits, const Tensor& target, double lr,
                const dist::StepComm& comm);
  // Drops the data phase opened by the last end_step (no batch came), closes the epoch.
  // The epoch's train loss and accuracy are summed over the ranks (a collective).
  void end_epoch();
  void epoch_evaluation(const EvalResult& r);
  // The classification report, confusion matrix and the per-rank metrics table
  // (a collective: every rank must call it). Rank 0 builds --report's page here.
  void final_evaluation(const EvalResult& r);
  // Rank 0 writes --report's page, last of all (after --save and --trace, once no
  // collective is left), so a failure here loses nothing else. Throws ddl::Error.
  void write_report();

 private:
  void say(const std::string& line);        // every rank, with its prefix
  void say_lines(const std::string& text);  // the prefix on each line of a multi-line text
  bool lead() const { return rank_ == 0; }
  void write_restart_marker();  // the "restart" line, when one is still pending
  // Reads the queued steps' loss and correct counts in one copy, then counts, logs and
  // shows each. host_times: the last step's times on the host clock.
  void read_steps(const report::StepTimes& host_times);
  // Every kSlowestEvery steps, on every rank: the slowest rank's step time so far, with
  // every rank's pace (one small all_reduce); NaN on the other steps or alone. See Note
  // [Slowest rank].
  double exchange_slowest(double step_s);
  // The report's own collectives, on the control group, counted into `ours`.
  struct OwnCollective {
    dist::OpStats stats;
    double time_s = 0;
  };
  void own_all_reduce(Tensor& t, dist::ReduceOp op, OwnCollective& ours);
  // The training group's counters plus the strategy's side groups. See Note [Control group].
  dist::CommStats strategy_stats() const;
  void build_html(const EvalResult& r, const report::ConfusionMatrix& cm, const std::vector<report::RankSummary>& ranks,
                  const dist::CommStats& stats, double wall_s);

  const TrainOptions& o_;
  const DataSplits& splits_;
  const nn::Module& model_;          // for the summary's model_digest
  dist::ProcessGroup* group_;        // training: the strategy's collectives only
  dist::ProcessGroup* control_;      // the report's, evaluation's and resume's collectives
  int rank_, world_, restarts_ = 0;  // restarts_: DDL_RESTART_COUNT
  std::string prefix_;
  int64_t batches_per_epoch_, epoch_ = 0;
  std::chrono::steady_clock::time_point start_;
  report::ResourceSampler sampler_;
  report::StepTimer timer_;
  report::ConvergenceTracker convergence_;
  std::unique_ptr<report::MetricsLog> log_;
  bool restart_pending_ = false;  // a "restart" marker line is due unless this rank resumes
  std::unique_ptr<report::ProgressBar> bar_;
  double loss_sum_ = 0, last_train_loss_ = std::numeric_limits<double>::quiet_NaN(),
         last_train_accuracy_ = std::numeric_limits<double>::quiet_NaN(),
         last_accuracy_ = std::numeric_limits<double>::quiet_NaN();
  int64_t seen_ = 0, correct_ = 0;
  report::TrainingHistory history_;  // rank 0's, for --report
  bool exchanging_ = false;          // whether ranks exchange their step times
  int64_t steps_done_ = 0;           // steps this process ran (the exchange's schedule)
  double slowest_s_ = std::numeric_limits<double>::quiet_NaN();
  dist::SyncStrategy* strategy_ = nullptr;  // set by strategy_made; outlives the report's use of it
  OwnCollective exchange_;                  // the slowest-rank exchange (control group)
  OwnCollective totals_;                    // the per-epoch train loss and accuracy sums (likewise)
  std::chrono::steady_clock::time_point epoch_start_, step_start_;
  // On a GPU clock: the steps since window_start_ (this epoch), timed together at an
  // exchange. See Note [Slowest rank].
  std::chrono::steady_clock::time_point window_start_;
  int64_t window_steps_ = 0;
  std::unique_ptr<report::HtmlReport> html_;  // --report's page, built by final_evaluation
  struct QueuedStep {
    int64_t step, images;
    double lr, slowest;
    nlohmann::json pace;  // the slowest rank's name and figures on an exchange step
    Tensor values;        // [2] float64 on the device: the loss and the number correct
  };
  std::vector<QueuedStep> queued_;  // steps not yet read: See Note [Deferred reads]

  // What travels on the slowest-rank exchange: every rank's pace (report/straggler.h).
  std::unique_ptr<LivePace> pace_;
};

}  // namespace ddl::apps
