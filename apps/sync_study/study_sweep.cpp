// Link columns and the summary across link settings (see study_sweep.h).
#include "apps/sync_study/study_sweep.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "apps/sync_study/study_stats.h"
#include <ddl/dist/sync/registry.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::apps {

namespace {

std::string f(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

bool exact(const std::string& s) {  // gradient averaging: the same updates as one big batch
  return dist::sync_spec_averages_gradients(s);
}

// The rows tied for fastest (study_stats.h's rule), of every strategy or of the exact ones.
std::vector<const StudyRow*> fastest(const std::vector<StudyRow>& rows, bool exact_only) {
  std::vector<const StudyRow*> candidates;
  for (const auto& r : rows)
    if (!exact_only || exact(r.strategy)) candidates.push_back(&r);
  return fastest_rows(candidates);
}

// One row: "ring was fastest (1000.0 ms per iteration, 60.00% test accuracy)", short: "ring (1000.0 ms,
// 60.00%)". A tie: "ring and ddp tie for fastest (990.0–1000.0 ms per iteration)", short without "for fastest".
std::string verdict(const std::vector<const StudyRow*>& tied, bool short_form) {
  const StudyRow& one = *tied.front();
  if (tied.size() == 1)
    return short_form ? one.strategy + " (" + f(one.step_ms) + " ms, " + f(one.test_accuracy_pct, 2) + "%)"
                      : one.strategy + " was fastest (" + f(one.step_ms) + " ms per iteration, " +
                            f(one.test_accuracy_pct, 2) + "% test accuracy)";
  double lo = one.step_ms, hi = lo;
  for (const StudyRow* r : tied) lo = std::min(lo, r->step_ms), hi = std::max(hi, r->step_ms);
  return name_list(tied) + (short_form ? " tie (" : " tie for fastest (") + f(lo) + "–" + f(hi) + " ms per iteration)";
}

// One markdown table: a row per strategy, a column per setting, `cell` of each.
template <typename Cell>
void pivot(std::ostream& md, const std::vector<SweepSetting>& settings, const std::string& title, Cell cell) {
  md << "| " << title << " |";
  for (const auto& s : settings) md << ' ' << s.link.spec << " |";
  md << "\n|---|";
  for (size_t i = 0; i < settings.size(); ++i) md << "---|";
  md << '\n';
  for (size_t k = 0; k < settings.front().rows.size(); ++k) {
    md << "| " << settings.front().rows[k].strategy << " |";
    for (const auto& s : settings) md << ' ' << (k < s.rows.size() ? cell(s.rows[k]) : "") << " |";
    md << '\n';
  }
  md << '\n';
}

}  // namespace

int64_t params_from_log(const std::string& log_path) {
  std::ifstream in(log_path);
  static const std::regex header(R"(model \S+ \((\d+) parameters\))");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, header)) return std::stoll(m[1].str());
  return 0;
}

// Note [Link use]
// Link use is what the algorithm moved on the busiest link per step over what the link
// could have carried while the workers waited: busiest / (rate × comm wait).
// - busiest: the most process-group bytes any rank received per step. Every strategy
//   here receives at least as much as it sends on its busiest rank (a ring: equal; the
//   hub of gather-scatter and param-server: (N-1)·S in, at most that out; stepwise: S),
//   so this is the busier direction of the busiest link. The start-up broadcast of rank
//   0's parameters (4 bytes each, received once by every other rank) is left out; model
//   buffers (BatchNorm's, ~0.1% of VGG-11-BN's state) are not, and count as step traffic.
// - comm wait: the table's column, the mean over ranks. It includes waiting for a rank
//   that computes more slowly, so skew lowers link use; ddp overlaps most of its
//   all-reduce with backward and waits only for the rest, so its link use can pass 100%.
void link_columns(StudyRow& row, int64_t params, double rate_bits) {
  const double startup = 4.0 * static_cast<double>(params);
  double busiest = 0;
  for (size_t r = 0; r < row.received_bytes.size(); ++r)
    busiest = std::max(busiest, row.received_bytes[r] - (r == 0 ? 0.0 : startup));
  busiest /= static_cast<double>(std::max<int64_t>(row.steps, 1));
  row.busiest_mb_per_step = busiest / 1e6;
  const double capacity = rate_bits / 8 * row.comm_ms / 1e3;  // bytes the link could carry in the wait
  row.link_use = capacity > 0 ? busiest / capacity : 0;
}

void write_sweep(const std::string& dir, const std::vector<SweepSetting>& settings, int hosts,
                 const std::string& dataset, const std::string& model) {
  namespace fs = std::filesystem;
  // Whole or not at all, and never through a link someone planted in the output folder.
  files::AtomicFile csv_file((fs::path(dir) / "study-sweep.csv").string(), "sync_study");
  std::ostream& csv = csv_file.stream();
  csv << "link,link_bits_per_s,strategy,step_ms,comm_wait_ms,link_sent_mb_per_host,link_received_mb_per_host,"
         "busiest_link_mb_per_step,link_use_percent,cpu_percent,peak_rss_mb,train_loss,test_accuracy_pct\n";
  for (const auto& s : settings)
    for (const auto& r : s.rows)
      csv << s.link.spec << ',' << static_cast<int64_t>(s.link.rate_bits) << ',' << r.strategy << ',' << r.step_ms
          << ',' << r.comm_ms << ',' << r.net_tx_mb << ',' << r.net_rx_mb << ',' << r.busiest_mb_per_step << ','
          << 100 * r.link_use << ',' << r.cpu_percent << ',' << r.peak_rss_mb << ',' << r.train_loss << ','
          << r.test_accuracy_pct << '\n';
  csv_file.commit();
  if (settings.empty() || settings.front().rows.empty()) return;

  files::AtomicFile md_file((fs::path(dir) / "study-sweep.md").string(), "sync_study");
  std::ostream& md = md_file.stream();
  md << "# Gradient synchronisation across link rates\n\n"
     << hosts << " emulated hosts (ddlrun --hosts), one worker each, model " << model << ", dataset " << dataset
     << ", same seed for every strategy and setting. One table per setting: ";
  for (size_t i = 0; i < settings.size(); ++i) md << (i ? ", " : "") << "study-" << settings[i].link.label << ".md";
  md << ". Times are means per iteration over the workers (first step of each epoch excluded). Link use: "
        "the busiest rank's process-group bytes received per step ÷ (link rate × comm wait); see the per-setting "
        "tables.\n\n";
  pivot(md, settings, "ms / iteration", [](const StudyRow& r) { return cell_with_spread(r, "step_ms"); });
  pivot(md, settings, "comm wait ms", [](const StudyRow& r) { return cell_with_spread(r, "comm_wait_ms"); });
  pivot(md, settings, "busiest link MB / step", [](const StudyRow& r) { return f(r.busiest_mb_per_step, 2); });
  pivot(md, settings, "MB sent by the busiest rank",
        [](const StudyRow& r) { return f(r.sent_max_mb) + " (rank " + std::to_string(r.sent_max_rank) + ")"; });
  pivot(md, settings, "link use %", [](const StudyRow& r) { return cell_with_spread(r, "link_use_percent", 0); });
  pivot(md, settings, "link MB sent / host", [](const StudyRow& r) { return f(r.net_tx_mb); });
  pivot(md, settings, "CPU %", [](const StudyRow& r) { return f(r.cpu_percent); });
  pivot(md, settings, "peak RSS MB", [](const StudyRow& r) { return f(r.peak_rss_mb); });
  pivot(md, settings, "train loss", [](const StudyRow& r) { return f(r.train_loss, 4); });
  pivot(md, settings, "test accuracy %", [](const StudyRow& r) { return f(r.test_accuracy_pct, 2); });

  md << "Winners (never named on a tie: times tie when their min–max ranges over --repeat runs overlap, or, for "
        "single runs, when they are within "
     << f(100 * kSingleRunNoise, 0) << "%):\n";
  for (const auto& s : settings) {
    const auto best = fastest(s.rows, false), best_exact = fastest(s.rows, true);
    if (best.empty()) continue;
    md << "- at " << s.link.spec << ": " << verdict(best, false);
    if (!best_exact.empty() && best_exact != best) md << "; of the exact strategies, " << verdict(best_exact, true);
    md << ".\n";
  }
  md_file.commit();
}

}  // namespace ddl::apps
