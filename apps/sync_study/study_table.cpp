// study.csv and study.md from the workers' summaries.
#include "apps/sync_study/study_table.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "report/metrics_log.h"
#include "tensor/error.h"

namespace ddl::apps {

namespace {
double num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}
std::string f(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
}  // namespace

StudyRow read_study_row(const std::string& strategy, const std::string& metrics_path, int nproc) {
  StudyRow row;
  row.strategy = strategy;
  for (int r = 0; r < nproc; ++r) {
    const std::string path = report::metrics_path_for_rank(metrics_path, r, nproc);
    std::ifstream in(path);
    DDL_CHECK(in.good(), "sync_study: cannot read ", path);
    nlohmann::json summary;
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.value("event", "") == "summary") summary = j;
    }
    DDL_CHECK(summary.is_object(), "sync_study: ", path, " has no summary line (did the run finish?)");
    const auto& mean = summary["steps"]["mean"];
    row.step_ms += num(mean, "total_s") * 1e3 / nproc;
    row.comm_ms += num(mean, "comm_wait_s") * 1e3 / nproc;
    row.sent_mb += num(summary, "pg_bytes_sent") / 1e6 / nproc;
    row.received_mb += num(summary, "pg_bytes_received") / 1e6 / nproc;
    row.cpu_percent += num(summary, "mean_cpu_percent") / nproc;
    row.peak_rss_mb = std::max(row.peak_rss_mb, num(summary, "peak_rss_bytes") / 1e6);
    row.wall_s = std::max(row.wall_s, num(summary, "wall_s"));
    row.net_tx_mb += num(summary, "net_tx_bytes") / 1e6 / nproc;
    row.net_rx_mb += num(summary, "net_rx_bytes") / 1e6 / nproc;
    row.received_bytes.push_back(num(summary, "pg_bytes_received"));
    if (r == 0) row.steps = static_cast<int64_t>(num(summary["steps"], "steps"));
    if (r == 0) row.train_loss = num(summary, "train_loss"), row.test_accuracy_pct = num(summary, "test_accuracy_pct");
  }
  return row;
}

void write_study(const std::string& dir, const std::vector<StudyRow>& rows, int nproc, const std::string& dataset,
                 const std::string& model, const std::string& transport, const std::string& name,
                 const std::string& link) {
  namespace fs = std::filesystem;
  const bool links = !link.empty();
  std::ofstream csv(fs::path(dir) / (name + ".csv"));
  csv << "strategy,step_ms,comm_wait_ms,sent_mb_per_worker,received_mb_per_worker,cpu_percent,peak_rss_mb,train_loss,"
         "test_accuracy_pct,wall_s"
      << (links ? ",link,link_sent_mb_per_host,link_received_mb_per_host,busiest_link_mb_per_step,link_use_percent"
                : "")
      << '\n';
  for (const auto& r : rows) {
    csv << r.strategy << ',' << r.step_ms << ',' << r.comm_ms << ',' << r.sent_mb << ',' << r.received_mb << ','
        << r.cpu_percent << ',' << r.peak_rss_mb << ',' << r.train_loss << ',' << r.test_accuracy_pct << ','
        << r.wall_s;
    if (links)
      csv << ',' << link << ',' << r.net_tx_mb << ',' << r.net_rx_mb << ',' << r.busiest_mb_per_step << ','
          << 100 * r.link_use;
    csv << '\n';
  }

  std::ofstream md(fs::path(dir) / (name + ".md"));
  md << "# Gradient synchronisation study" << (links ? ", links at " + link : "") << "\n\n"
     << nproc << (links ? " emulated hosts, one worker each" : " workers") << ", model " << model << ", dataset "
     << dataset
     << ", same seed for every strategy. Times are means per iteration over the workers (first step of each epoch "
        "excluded); bytes are what each worker sent and received through the process group; memory is the largest "
        "worker's peak resident size. "
     << transport << "\n\n";
  if (links)
    md << "Link columns: MB each host's network interface sent over the whole run (its namespace's /proc/net/dev, "
          "headers included, mean over hosts); the process-group MB received per step by the busiest rank (the "
          "start-up broadcast of the model left out); link use = that ÷ (link rate × comm wait).\n\n";
  md << "| strategy | ms / iteration | comm wait ms | MB sent / worker | MB received / worker | "
     << (links ? "link MB sent / host | busiest link MB / step | link use % | " : "")
     << "CPU % | peak RSS MB | train loss | test accuracy |\n|---|---|---|---|---|" << (links ? "---|---|---|" : "")
     << "---|---|---|---|\n";
  for (const auto& r : rows) {
    md << "| " << r.strategy << " | " << f(r.step_ms) << " | " << f(r.comm_ms) << " | " << f(r.sent_mb) << " | "
       << f(r.received_mb) << " | ";
    if (links) md << f(r.net_tx_mb) << " | " << f(r.busiest_mb_per_step, 2) << " | " << f(100 * r.link_use, 0) << " | ";
    md << f(r.cpu_percent) << " | " << f(r.peak_rss_mb) << " | " << f(r.train_loss, 4) << " | "
       << f(r.test_accuracy_pct, 2) << "% |\n";
  }
  if (rows.size() >= 2) {
    auto sorted = rows;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.step_ms < b.step_ms; });
    const auto& best = sorted.front();
    const auto& next = sorted[1];
    const auto& worst = sorted.back();
    md << "\n"
       << best.strategy << " was fastest at " << f(best.step_ms) << " ms per iteration, "
       << f(100 * (next.step_ms / best.step_ms - 1)) << "% ahead of " << next.strategy << " and "
       << f(worst.step_ms / best.step_ms, 2) << "x faster than the slowest, " << worst.strategy << " ("
       << f(worst.step_ms) << " ms). ";
    const auto least =
        *std::min_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.sent_mb < b.sent_mb; });
    md << least.strategy << " moved the fewest bytes per worker (" << f(least.sent_mb) << " MB sent). "
       << "Strategies that average gradients every step (ddp, allreduce, gather-scatter, ring, param-server) compute "
          "the same updates, so their losses agree; stepwise and local-SGD trade exactness for less communication.\n";
  }
}

}  // namespace ddl::apps
