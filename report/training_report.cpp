// training_report(): the run's charts and tables, from the caller's own measurements.
#include <cmath>

#include <ddl/report/training_report.h>

namespace ddl::report {

double TrainingHistory::x_of(const Step& s) const {
  return static_cast<double>(s.epoch) +
         static_cast<double>(s.step + 1) / static_cast<double>(std::max<int64_t>(steps_per_epoch_, 1));
}

namespace {

void curves(HtmlReport& r, const TrainingHistory& h) {
  Series step_loss{"train loss per step", {}, {}}, step_acc{"train batch accuracy per step", {}, {}},
      lr{"learning rate", {}, {}};
  for (const auto& s : h.steps()) {
    const double x = h.x_of(s);
    step_loss.x.push_back(x), step_loss.y.push_back(s.loss);
    step_acc.x.push_back(x), step_acc.y.push_back(s.accuracy_pct);
    lr.x.push_back(x), lr.y.push_back(s.lr);
  }
  Series epoch_loss{"train loss per epoch", {}, {}}, epoch_acc{"train accuracy per epoch", {}, {}};
  for (const auto& e : h.epochs()) {
    const double x = static_cast<double>(e.epoch + 1);
    epoch_loss.x.push_back(x), epoch_loss.y.push_back(e.train_loss);
    epoch_acc.x.push_back(x), epoch_acc.y.push_back(e.train_accuracy_pct);
  }
  Series test_loss{"test loss per epoch", {}, {}}, test_acc{"test accuracy per epoch", {}, {}};
  for (const auto& e : h.evals()) {
    const double x = static_cast<double>(e.epoch + 1);
    test_loss.x.push_back(x), test_loss.y.push_back(e.test_loss);
    test_acc.x.push_back(x), test_acc.y.push_back(e.test_accuracy_pct);
  }
  r.add(LineChart{"loss", "Loss (cross-entropy)", "epoch", "loss", {step_loss, epoch_loss, test_loss}});
  r.add(LineChart{"accuracy", "Accuracy", "epoch", "accuracy (%)", {step_acc, epoch_acc, test_acc}});
  r.add(LineChart{"lr", "Learning rate per step", "epoch", "learning rate", {lr}});
}

// One stacked bar per rank, from the same RankSummary fields the per-rank table prints.
void step_times(HtmlReport& r, const std::vector<RankSummary>& ranks) {
  BarChart c{"step-time", "Mean step time per rank (first step of each epoch excluded)", "rank", "time (ms)", {}, {},
             true};
  const std::pair<const char*, RankField> parts[] = {{"data", RankField::DataMs},
                                                     {"forward", RankField::ForwardMs},
                                                     {"backward", RankField::BackwardMs},
                                                     {"comm wait", RankField::CommWaitMs},
                                                     {"optimizer", RankField::OptimizerMs}};
  for (size_t i = 0; i < ranks.size(); ++i) c.categories.push_back(std::to_string(i));
  for (const auto& [name, field] : parts) {
    Series s{name, {}, {}};
    for (const auto& rank : ranks) s.y.push_back(rank[field]);
    c.series.push_back(s);
  }
  r.add(c);
}

void bytes(HtmlReport& r, const dist::CommStats& stats) {
  BarChart c{"bytes",     "Process-group traffic by operation (this rank, whole run)",
             "operation", "MB (10^6 bytes)",
             {},          {{"sent", {}, {}}, {"received", {}, {}}},
             false};
  for (int k = 0; k < dist::kNumOpKinds; ++k) {
    const dist::OpStats& op = stats.ops[k];
    if (op.calls == 0) continue;
    c.categories.push_back(dist::op_kind_name(static_cast<dist::OpKind>(k)));
    c.series[0].y.push_back(static_cast<double>(op.bytes_sent) / 1e6);
    c.series[1].y.push_back(static_cast<double>(op.bytes_received) / 1e6);
  }
  if (c.categories.empty()) return;
  r.add(c);
}

void confusion(HtmlReport& r, const ConfusionMatrix& cm) {
  HeatMap h{"confusion",
            "Confusion matrix (test set; rows: true class, columns: predicted)",
            "true class",
            "predicted class",
            {},
            {},
            {}};
  for (int t = 0; t < cm.num_classes(); ++t) {
    h.rows.push_back(cm.class_name(t));
    h.cols.push_back(cm.class_name(t));
    h.counts.emplace_back();
    for (int p = 0; p < cm.num_classes(); ++p) h.counts.back().push_back(cm.count(t, p));
  }
  r.add(h);
  r.preformatted("classification", "Classification report (scikit-learn's layout, fractions of 1)",
                 classification_report(cm).to_string());
}

}  // namespace

HtmlReport training_report(const TrainingReportInputs& in) {
  HtmlReport r(in.title);
  if (!in.settings.empty()) r.key_values("settings", "Settings", in.settings);
  if (!in.results.empty()) r.key_values("results", "Results", in.results);
  if (in.history) {
    r.section("Training curves");
    curves(r, *in.history);
  }
  if (!in.ranks.empty() || in.comm) r.section("Time and traffic");
  if (!in.ranks.empty()) {
    step_times(r, in.ranks);
    r.preformatted("ranks", "Per-rank table", format_rank_table(in.ranks));
  }
  if (in.comm) bytes(r, *in.comm);
  if (in.confusion) {
    r.section("Evaluation");
    confusion(r, *in.confusion);
  }
  return r;
}

}  // namespace ddl::report
