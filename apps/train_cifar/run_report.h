// What train_cifar prints and records: the per-rank header, step logs (loss,
// batch accuracy, batch time), epoch summaries, test results with the
// classification report and confusion matrix, the per-worker metrics table,
// and the JSON lines of --metrics. Every rank logs with its "[rank r/N]"
// prefix; only rank 0 prints evaluation results and the final tables.
#pragma once

#include <chrono>
#include <fstream>
#include <memory>

#include "apps/common/classification_report.h"
#include "apps/common/metrics_log.h"
#include "apps/common/progress.h"
#include "apps/common/rank_table.h"
#include "apps/common/step_timer.h"
#include "apps/common/worker_metrics.h"
#include "apps/train_cifar/datasets.h"
#include "apps/train_cifar/evaluate.h"
#include "apps/train_cifar/options.h"

namespace ddl::apps {

class RunReport {
 public:
  RunReport(const TrainOptions& o, const DataSplits& splits, dist::ProcessGroup* group, const nn::Module& model,
            int64_t batches_per_epoch);

  StepTimer& timer() { return timer_; }
  void start_epoch(int64_t epoch);
  // After the optimizer step: closes the step's timing, logs every --log-every steps.
  // comm_ms: time the sync strategy spent communicating inside backward (DDP), moved
  // from the backward phase to comm_wait.
  void end_step(int64_t step, double loss, const Tensor& logits, const Tensor& target, double lr, double comm_ms);
  void end_epoch();
  void epoch_evaluation(const EvalResult& r);
  // The classification report, confusion matrix and the per-rank metrics table
  // (a collective: every rank must call it).
  void final_evaluation(const EvalResult& r);

 private:
  void say(const std::string& line);  // every rank, with its prefix
  bool lead() const { return rank_ == 0; }

  const TrainOptions& o_;
  const DataSplits& splits_;
  dist::ProcessGroup* group_;
  int rank_, world_;
  std::string prefix_;
  int64_t batches_per_epoch_, epoch_ = 0;
  std::chrono::steady_clock::time_point start_;
  ResourceSampler sampler_;
  StepTimer timer_;
  ConvergenceTracker convergence_;
  std::unique_ptr<MetricsLog> log_;
  std::unique_ptr<ProgressBar> bar_;
  double loss_sum_ = 0, last_train_loss_ = std::numeric_limits<double>::quiet_NaN(), last_accuracy_ = std::numeric_limits<double>::quiet_NaN();
  int64_t seen_ = 0, correct_ = 0;
};

}  // namespace ddl::apps
