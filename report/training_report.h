// TrainingHistory and training_report(): the HTML report of one training run, for
// train_cifar and users' own loops. The history keeps what the caller logged (per step,
// per epoch, per evaluation; about 40 bytes a step); the report draws it beside the
// per-rank summaries, the process group's bytes and the confusion matrix the caller's text
// tables print. Accuracy is in percent throughout. It measures nothing itself.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ddl/dist/process_group.h>
#include <ddl/report/classification_report.h>
#include <ddl/report/html_report.h>
#include <ddl/report/rank_table.h>

namespace ddl::report {

class TrainingHistory {
 public:
  struct Step {
    int64_t epoch, step;  // 0-based; step within its epoch
    double loss, accuracy_pct, lr;
  };
  struct Epoch {
    int64_t epoch;
    double train_loss, train_accuracy_pct;
  };
  struct Eval {
    int64_t epoch;
    double test_loss, test_accuracy_pct;
  };

  // steps_per_epoch: places step s of epoch e at x = e + (s + 1) / steps_per_epoch.
  explicit TrainingHistory(int64_t steps_per_epoch = 1) : steps_per_epoch_(steps_per_epoch) {}
  void step(int64_t epoch, int64_t step, double loss, double accuracy_pct, double lr) {
    steps_.push_back({epoch, step, loss, accuracy_pct, lr});
  }
  void epoch(int64_t epoch, double train_loss, double train_accuracy_pct) {
    epochs_.push_back({epoch, train_loss, train_accuracy_pct});
  }
  void eval(int64_t epoch, double test_loss, double test_accuracy_pct) {
    evals_.push_back({epoch, test_loss, test_accuracy_pct});
  }

  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<Epoch>& epochs() const { return epochs_; }
  const std::vector<Eval>& evals() const { return evals_; }
  double x_of(const Step& s) const;  // in epochs

 private:
  int64_t steps_per_epoch_;
  std::vector<Step> steps_;
  std::vector<Epoch> epochs_;
  std::vector<Eval> evals_;
};

struct TrainingReportInputs {
  std::string title = "Training report";
  std::vector<std::pair<std::string, std::string>> settings, results;  // shown as given
  const TrainingHistory* history = nullptr;
  std::vector<RankSummary> ranks;         // gather_rank_summaries(); empty: no step-time bars
  const dist::CommStats* comm = nullptr;  // one rank's counters; null: no bytes chart
  const ConfusionMatrix* confusion = nullptr;
};

// Charts (data-chart): "loss", "accuracy", "lr" (from the history), "step-time" (one
// stacked bar per rank: data, forward, backward, comm wait, optimizer, in ms),
// "bytes" (MB sent and received per operation kind), "confusion" (heat map), and tables
// "settings", "results", "ranks" (format_rank_table's values), "classification".
HtmlReport training_report(const TrainingReportInputs& in);

}  // namespace ddl::report
