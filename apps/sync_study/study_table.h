// Reading the workers' metrics summaries of one study run and writing the
// comparison (study.csv, study.md with a generated paragraph).
#pragma once

#include <string>
#include <vector>

namespace ddl::apps {

struct StudyRow {
  std::string strategy;
  double step_ms = 0, comm_ms = 0;            // mean per iteration over workers
  double sent_mb = 0, received_mb = 0;        // per worker, mean over workers
  double cpu_percent = 0, peak_rss_mb = 0;    // mean over workers, max over workers
  double train_loss = 0, test_accuracy = 0;   // rank 0's
  double wall_s = 0;
};

// Reads the "summary" event of each rank's metrics file (metrics.rank<r>.jsonl).
StudyRow read_study_row(const std::string& strategy, const std::string& metrics_path, int nproc);
// `transport`: one sentence on how the workers talked (printed under the title).
void write_study(const std::string& dir, const std::vector<StudyRow>& rows, int nproc, const std::string& dataset,
                 const std::string& model, const std::string& transport);

}  // namespace ddl::apps
