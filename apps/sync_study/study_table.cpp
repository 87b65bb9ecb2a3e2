// study.csv and study.md from the workers' summaries.
#include "apps/sync_study/study_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "apps/sync_study/study_stats.h"
#include <ddl/base/error.h>
#include <ddl/report/metrics_log.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::apps {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// summary[key] of `path`: a number, NaN for null (n/a: the run could not measure it); a
// missing key (or a non-number) is an error, never a 0 that reads like a measurement.
double num(const nlohmann::json& j, const char* key, const std::string& path, const char* where = "") {
  DDL_CHECK(j.is_object() && j.contains(key) && (j[key].is_number() || j[key].is_null()), "sync_study: ", path,
            ": the summary line has no number for '", where, key, "'");
  return j[key].is_null() ? kNaN : j[key].get<double>();
}
// The larger of two values, n/a when either is (std::max would drop a NaN).
double max_known(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b); }
std::string f(double v, int digits = 1) {  // study.md's cells
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
struct Csv {  // study.csv's cells: n/a as in study.md, else the stream's 6 digits
  double v;
  friend std::ostream& operator<<(std::ostream& os, Csv c) { return std::isfinite(c.v) ? os << c.v : os << "n/a"; }
};
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
    const auto get = [&](const char* key) { return num(summary, key, path); };
    DDL_CHECK(summary.contains("steps") && summary["steps"].contains("mean"), "sync_study: ", path,
              ": the summary line has no 'steps.mean'");
    const auto& steps = summary["steps"];
    row.step_ms += num(steps["mean"], "total_s", path, "steps.mean.") * 1e3 / nproc;
    const double comm = num(steps["mean"], "comm_wait_s", path, "steps.mean.") * 1e3, sent = get("pg_bytes_sent") / 1e6;
    row.comm_ms += comm / nproc;
    row.sent_mb += sent / nproc;
    // The first rank wins ties, so equal ranks name rank 0. NaN (n/a) stays n/a.
    if (r == 0 || sent > row.sent_max_mb) row.sent_max_mb = sent, row.sent_max_rank = r;
    if (r == 0 || comm > row.comm_max_ms) row.comm_max_ms = comm, row.comm_max_rank = r;
    row.sent_min_mb = r == 0 ? sent : std::min(row.sent_min_mb, sent);
    row.comm_min_ms = r == 0 ? comm : std::min(row.comm_min_ms, comm);
    row.received_mb += get("pg_bytes_received") / 1e6 / nproc;
    row.cpu_percent += get("mean_cpu_percent") / nproc;
    row.peak_rss_mb = max_known(row.peak_rss_mb, get("peak_rss_bytes") / 1e6);
    row.wall_s = max_known(row.wall_s, get("wall_s"));
    row.net_tx_mb += get("net_tx_bytes") / 1e6 / nproc;
    row.net_rx_mb += get("net_rx_bytes") / 1e6 / nproc;
    row.received_bytes.push_back(get("pg_bytes_received"));
    if (r == 0) row.steps = static_cast<int64_t>(num(steps, "steps", path, "steps."));
    if (r == 0) row.train_loss = get("train_loss"), row.test_accuracy_pct = get("test_accuracy_pct");
  }
  return row;
}

void write_study(const std::string& dir, const std::vector<StudyRow>& rows, int nproc, const std::string& dataset,
                 const std::string& model, const std::string& transport, const std::string& name,
                 const std::string& link) {
  namespace fs = std::filesystem;
  const bool links = !link.empty();
  // Whole or not at all, and never through a link someone planted in the output folder.
  files::AtomicFile csv_file((fs::path(dir) / (name + ".csv")).string(), "sync_study");
  std::ostream& csv = csv_file.stream();
  csv << "strategy,step_ms,comm_wait_ms,sent_mb_per_worker,received_mb_per_worker,cpu_percent,peak_rss_mb,train_loss,"
         "test_accuracy_pct,wall_s"
      << (links ? ",link,link_sent_mb_per_host,link_received_mb_per_host,busiest_link_mb_per_step,link_use_percent"
                : "")
      << ",sent_mb_min_rank,sent_mb_max_rank,sent_max_rank,comm_wait_ms_min_rank,comm_wait_ms_max_rank,comm_max_rank,"
         "repeats";
  // --repeat: each measured column's min and max over the runs (the mean itself when one run).
  for (const auto& c : measured_columns())
    if (links || !c.link) csv << ',' << c.key << "_min," << c.key << "_max";
  csv << '\n';
  for (const auto& r : rows) {
    csv << r.strategy << ',' << Csv{r.step_ms} << ',' << Csv{r.comm_ms} << ',' << Csv{r.sent_mb} << ','
        << Csv{r.received_mb} << ',' << Csv{r.cpu_percent} << ',' << Csv{r.peak_rss_mb} << ',' << Csv{r.train_loss}
        << ',' << Csv{r.test_accuracy_pct} << ',' << Csv{r.wall_s};
    if (links)
      csv << ',' << link << ',' << Csv{r.net_tx_mb} << ',' << Csv{r.net_rx_mb} << ',' << Csv{r.busiest_mb_per_step}
          << ',' << Csv{100 * r.link_use};
    csv << ',' << Csv{r.sent_min_mb} << ',' << Csv{r.sent_max_mb} << ',' << r.sent_max_rank << ',' << Csv{r.comm_min_ms}
        << ',' << Csv{r.comm_max_ms} << ',' << r.comm_max_rank << ',' << r.repeats;
    for (const auto& c : measured_columns()) {
      if (!links && c.link) continue;
      const auto it = r.spread.find(c.key);
      const double v = r.*c.field;
      csv << ',' << Csv{c.scale * (it == r.spread.end() ? v : it->second.first)} << ','
          << Csv{c.scale * (it == r.spread.end() ? v : it->second.second)};
    }
    csv << '\n';
  }

  csv_file.commit();

  files::AtomicFile md_file((fs::path(dir) / (name + ".md")).string(), "sync_study");
  std::ostream& md = md_file.stream();
  md << "# Gradient synchronisation study" << (links ? ", links at " + link : "") << "\n\n"
     << nproc << (links ? " emulated hosts, one worker each" : " workers") << ", model " << model << ", dataset "
     << dataset
     << ", same seed for every strategy. Times are means per iteration over the workers (first step of each epoch "
        "excluded); bytes are what each worker sent and received through the process group; memory is the largest "
        "worker's peak resident size. "
     << transport << "\n\n";
  const int repeats = rows.empty() ? 1 : rows.front().repeats;
  if (repeats > 1)
    md << "Each strategy ran " << repeats
       << " times (--repeat): every cell is the mean over the runs, with the smallest and largest run in brackets "
          "(min–max; the per-rank columns show the means only, study.csv has their ranges).\n\n";
  md << "Per rank: the least and the most any one worker sent (MB, whole run) and waited (ms per iteration), with the "
        "rank of the most, so that a hub shows beside the mean.\n\n";
  if (links)
    md << "Link columns: MB each host's network interface sent over the whole run (its namespace's /proc/net/dev, "
          "headers included, mean over hosts); the process-group MB received per step by the busiest rank (the "
          "start-up broadcast of the model left out); link use = that ÷ (link rate × comm wait).\n\n";
  md << "| strategy | ms / iteration | comm wait ms | comm wait ms min–max / rank | MB sent / worker | MB sent "
        "min–max / rank | MB received / worker | "
     << (links ? "link MB sent / host | busiest link MB / step | link use % | " : "")
     << "CPU % | peak RSS MB | train loss | test accuracy |\n|---|---|---|---|---|---|---|"
     << (links ? "---|---|---|" : "") << "---|---|---|---|\n";
  const auto by_rank = [](double lo, double hi, int rank) {
    return f(lo) + "–" + f(hi) + " (max: rank " + std::to_string(rank) + ")";
  };
  for (const auto& r : rows) {
    md << "| " << r.strategy << " | " << cell_with_spread(r, "step_ms") << " | " << cell_with_spread(r, "comm_wait_ms")
       << " | " << by_rank(r.comm_min_ms, r.comm_max_ms, r.comm_max_rank) << " | "
       << cell_with_spread(r, "sent_mb_per_worker") << " | " << by_rank(r.sent_min_mb, r.sent_max_mb, r.sent_max_rank)
       << " | " << cell_with_spread(r, "received_mb_per_worker") << " | ";
    if (links)
      md << cell_with_spread(r, "link_sent_mb_per_host") << " | " << cell_with_spread(r, "busiest_link_mb_per_step", 2)
         << " | " << cell_with_spread(r, "link_use_percent", 0) << " | ";
    md << cell_with_spread(r, "cpu_percent") << " | " << cell_with_spread(r, "peak_rss_mb") << " | "
       << cell_with_spread(r, "train_loss", 4) << " | " << cell_with_spread(r, "test_accuracy_pct", 2) << "% |\n";
  }
  if (rows.size() >= 2) md << "\n" << study_summary(rows) << "\n";
  md_file.commit();
}

}  // namespace ddl::apps
