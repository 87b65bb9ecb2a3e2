// RunReport's results: the evaluation lines, the final summary (classification report,
// confusion matrix, per-rank table, the --metrics summary line) and --report's page. The
// traffic it reports is the training group's, which carries the sync strategy's
// collectives only (Note [Control group] in run_report.h).
#include <iostream>
#include <sstream>

#include "apps/train_cifar/run_report.h"
#include "apps/train_cifar/run_report_util.h"
#include <ddl/ft/resume.h>

namespace ddl::apps {

namespace {
using run_report_detail::fmt;
using run_report_detail::seconds_since;

std::string digest_hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

nlohmann::json own_json(const dist::OpStats& s, double time_s) {
  return {{"calls", s.calls}, {"bytes_sent", s.bytes_sent}, {"bytes_received", s.bytes_received}, {"time_s", time_s}};
}

std::string indented(const std::string& lines) {
  std::string out;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) out += "  " + line + "\n";
  return out;
}
}  // namespace

dist::CommStats RunReport::strategy_stats() const {
  dist::CommStats s = group_ ? group_->stats() : dist::CommStats{};
  if (strategy_) {  // what it sent on groups of its own (async-ps)
    const dist::CommStats side = strategy_->side_stats();
    for (size_t k = 0; k < s.ops.size(); ++k) {
      s.ops[k].calls += side.ops[k].calls;
      s.ops[k].bytes_sent += side.ops[k].bytes_sent;
      s.ops[k].bytes_received += side.ops[k].bytes_received;
    }
  }
  return s;
}

void RunReport::epoch_evaluation(const EvalResult& r) {
  last_accuracy_ = r.accuracy;
  convergence_.record(seconds_since(start_), 100 * r.accuracy);
  if (log_)
    log_->write("eval", {{"epoch", epoch_},
                         {"test_loss", r.loss},
                         {"test_accuracy_pct", 100 * r.accuracy},
                         {"test_images", r.samples}});
  if (lead()) {
    history_.eval(epoch_, r.loss, 100 * r.accuracy);
    say(fmt("epoch %.0f: test loss %.4f, test accuracy %.2f%% (%.0f images)", double(epoch_ + 1), r.loss,
            100 * r.accuracy, double(r.samples)));
  }
}

void RunReport::final_evaluation(const EvalResult& r) {
  last_accuracy_ = r.accuracy;
  report::ConfusionMatrix cm(static_cast<int>(splits_.num_classes), splits_.class_names);
  cm.add_counts(r.confusion);
  if (lead()) {
    say_lines(
        fmt("test loss %.4f, test accuracy %.2f%% on %.0f images\n", r.loss, 100 * r.accuracy, double(r.samples)) +
        report::classification_report(cm).to_string() + "\nconfusion matrix (rows: true class, columns: predicted)\n" +
        report::format_confusion_matrix(cm));
  }
  const report::ResourceSummary res = sampler_.summary();
  const double wall = seconds_since(start_);  // one wall time for the log, the tables and the page
  const dist::CommStats stats = strategy_stats();
  if (log_)
    log_->summary(res, {{"test_accuracy_pct", 100 * r.accuracy},
                        {"test_loss", r.loss},
                        {"test_images", r.samples},
                        {"train_loss", last_train_loss_},
                        {"train_accuracy_pct", last_train_accuracy_},
                        {"convergence_s", convergence_.time_s()},
                        {"wall_s", wall},
                        {"pg_bytes_sent", group_ ? stats.bytes_sent() : 0},
                        {"pg_bytes_received", group_ ? stats.bytes_received() : 0},
                        {"pg_ops", report::to_json(stats)},
                        {"steps", report::to_json(timer_.run())},
                        {"slowest_rank_exchange", own_json(exchange_.stats, exchange_.time_s)},
                        {"train_totals_exchange", own_json(totals_.stats, totals_.time_s)},
                        {"model_digest", digest_hex(ft::model_digest(model_))}});
  const report::RankSummary mine = report::make_rank_summary(res, timer_.run(), group_ ? &stats : nullptr,
                                                             convergence_.time_s(), 100 * r.accuracy, wall);
  const std::vector<report::RankSummary> ranks = report::gather_rank_summaries(mine, control_);  // collective
  if (!lead()) return;
  say_lines("\n" + report::format_rank_table(ranks));
  if (group_) say_lines("rank 0's process-group traffic by operation:\n" + indented(stats.summary()));
  if (!o_.report.empty()) build_html(r, cm, ranks, stats, wall);
}

void RunReport::write_report() {
  if (!html_) return;
  html_->write(o_.report);
  say("wrote the report to " + o_.report);
}

void RunReport::build_html(const EvalResult& r, const report::ConfusionMatrix& cm,
                           const std::vector<report::RankSummary>& ranks, const dist::CommStats& stats, double wall_s) {
  const auto num = [](const char* f, double v) { return fmt(f, v); };
  report::TrainingReportInputs in;
  in.title = "train_cifar: " + o_.model + " on " + o_.dataset;
  in.settings = {{"model", o_.model},
                 {"dataset", o_.dataset + " (" + std::to_string(splits_.train_size) + " train / " +
                                 std::to_string(splits_.test_size) + " test)"},
                 {"world size", std::to_string(world_)},
                 {"sync", world_ > 1 ? o_.sync : std::string("none")},
                 {"batch per worker", std::to_string(o_.batch_size)},
                 {"epochs", std::to_string(o_.epochs)},
                 {"learning rate (peak)", num("%g", o_.lr)},
                 {"schedule", o_.schedule},
                 {"device", o_.device},
                 {"seed", std::to_string(o_.seed)}};
  in.results = {{"test loss", num("%.4f", r.loss)},
                {"test accuracy (%)", num("%.2f", 100 * r.accuracy)},
                {"test images", std::to_string(r.samples)},
                {"train loss (last epoch, all ranks)", num("%.4f", last_train_loss_)},
                {"train accuracy (last epoch, all ranks, %)", num("%.2f", last_train_accuracy_)},
                {"wall time (s)", num("%.1f", wall_s)}};
  in.history = &history_;
  in.ranks = ranks;
  in.comm = group_ ? &stats : nullptr;
  in.confusion = &cm;
  html_ = std::make_unique<report::HtmlReport>(report::training_report(in));
}

}  // namespace ddl::apps
