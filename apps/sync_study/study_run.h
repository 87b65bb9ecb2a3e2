// Running one strategy of the study: the ddlrun + train_cifar command line (on one
// machine, or on emulated hosts behind one link setting), its log, and its row.
// It does not shape links or make hosts itself: ddlrun --hosts does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/sync_study/link_setting.h"
#include "apps/sync_study/study_table.h"

namespace ddl::apps {

struct StudyConfig {
  std::string bin_dir;  // where ddlrun and train_cifar are (sync_study's own folder)
  int nproc = 2;        // workers; with hosts > 0, one per host
  int hosts = 0;        // 0: all workers on this machine (ddlrun --nproc)
  std::string dataset = "synthetic", model = "mlp";
  int64_t epochs = 1, batch = 32, train_samples = 1024, test_samples = 256, seed = 0;
  bool shm = false;
  std::vector<std::string> extra;    // more train_cifar flags
  std::string trace;                 // --trace FILE.json: one timeline per run (trace_path)
  std::vector<std::string> plugins;  // train_cifar --plugin FILE.so, each (absolute paths)
};

// Where the run of `strategy` (at `link`) writes its timeline: `trace` with the strategy and
// the link's label before the extension, e.g. t.json -> t.ring.json or t.ring.100mbit.json.
std::string trace_path(const std::string& trace, const std::string& strategy, const LinkSetting* link);

// The shell command that trains with `strategy`, writing metrics to `metrics`.
std::string train_command(const StudyConfig& cfg, const std::string& strategy, const std::string& metrics,
                          const LinkSetting* link);

// Runs `strategy` with its output in DIR/<strategy>.log and metrics in DIR/<strategy>.jsonl;
// prints one progress line. Returns its row, or nothing (and says where the log is) when
// the run failed. With a link, the row has its link columns.
std::optional<StudyRow> run_strategy(const StudyConfig& cfg, const std::string& strategy, const std::string& dir,
                                     const LinkSetting* link);

// What ddlrun said, in a run's log (DIR/<strategy>.log), about a link setting it could not
// emulate in full (e.g. no netem: the rate without the delay); empty when nothing.
std::string link_warning(const std::string& dir, const std::string& strategy);

}  // namespace ddl::apps
