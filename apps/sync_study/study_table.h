// Reading the workers' metrics summaries of one study run and writing the
// comparison (study.csv, study.md with a generated paragraph).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ddl::apps {

struct StudyRow {
  std::string strategy;
  double step_ms = 0, comm_ms = 0;               // mean per iteration over workers
  double sent_mb = 0, received_mb = 0;           // per worker, mean over workers
  double cpu_percent = 0, peak_rss_mb = 0;       // mean over workers, max over workers
  double train_loss = 0, test_accuracy_pct = 0;  // rank 0's; accuracy in percent
  double wall_s = 0;
  // Over emulated hosts (sync_study --hosts): one rank per host, so the network counters
  // (/proc/net/dev without loopback, the host's own namespace) are the host's link.
  double net_tx_mb = 0, net_rx_mb = 0;  // per host, mean over hosts, the whole run
  int64_t steps = 0;                    // training steps per rank
  std::vector<double> received_bytes;   // per rank, through the process group
  double busiest_mb_per_step = -1;      // see link_columns() in study_sweep.h; -1: not measured
  double link_use = -1;                 // fraction; -1: not measured
  // The busiest and the idlest rank, so that a hub (param-server's rank 0) shows beside the mean.
  double sent_min_mb = 0, sent_max_mb = 0;  // over ranks, the whole run
  double comm_min_ms = 0, comm_max_ms = 0;  // over ranks, mean per iteration
  int sent_max_rank = 0, comm_max_rank = 0;
  // --repeat: how many runs the row's means are over, and each measured column's (min, max)
  // over them, by its key in measured_columns() (empty for one run). See study_stats.h.
  int repeats = 1;
  std::map<std::string, std::pair<double, double>> spread;
};

// Reads the "summary" event of each rank's metrics file (metrics.rank<r>.jsonl). A null
// value (n/a) makes its column NaN, shown as "n/a" in study.md, study.csv and study.html;
// a missing key throws ddl::Error naming the file and the key.
StudyRow read_study_row(const std::string& strategy, const std::string& metrics_path, int nproc);
// `transport`: one sentence on how the workers talked (printed under the title). Writes
// DIR/NAME.csv and DIR/NAME.md; with `link` (a link setting, e.g. "100mbit") the table
// also has the link columns (bytes on each host's link, busiest link per step, link use).
void write_study(const std::string& dir, const std::vector<StudyRow>& rows, int nproc, const std::string& dataset,
                 const std::string& model, const std::string& transport, const std::string& name = "study",
                 const std::string& link = "");

}  // namespace ddl::apps
