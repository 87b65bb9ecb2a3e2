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
  // With hosts: ddlrun's own per-host flags, passed on as given: "host1=0.5" (--cpu, a CPU
  // quota: a straggler) and "host2=10mbit,20ms" (--link, one host's slower link).
  std::vector<std::string> cpu, host_links;
  int repeat = 1;  // runs per strategy (and link setting); the row holds their means and ranges
};

// Checks and converts sync_study's per-host flags for `hosts` hosts: --cpu hostI=FRACTION
// (0 < FRACTION <= 64) and --link hostI=RATE[/DELAY[/LOSS]] (as --links, / between parts),
// into ddlrun's syntax ("host2=10mbit,20ms"). Throws ddl::Error naming the bad flag.
std::string host_cpu_arg(const std::string& flag, int hosts);
std::string host_link_arg(const std::string& flag, int hosts);

// Where the run of `strategy` (at `link`) writes its timeline: `trace` with the strategy and
// the link's label before the extension, e.g. t.json -> t.ring.json or t.ring.100mbit.json.
std::string trace_path(const std::string& trace, const std::string& strategy, const LinkSetting* link);

// The shell command that trains with `strategy`, writing metrics to `metrics`; `run` (1..
// cfg.repeat) names its timeline apart from the other runs' (t.ring.run2.json).
std::string train_command(const StudyConfig& cfg, const std::string& strategy, const std::string& metrics,
                          const LinkSetting* link, int run = 1);

// Runs `strategy` with its output in DIR/<strategy>.log and metrics in DIR/<strategy>.jsonl
// (with cfg.repeat > 1, cfg.repeat times, as DIR/<strategy>.run<k>.log and .jsonl); prints
// one progress line per run. Returns its row (the runs' means and ranges: combine_runs),
// or nothing (and says where the log is) when a run failed. With a link, the row has its
// link columns.
std::optional<StudyRow> run_strategy(const StudyConfig& cfg, const std::string& strategy, const std::string& dir,
                                     const LinkSetting* link);

// The file stem of run k (1-based) of `strategy`: "ring", or "ring.run2" with cfg.repeat > 1.
std::string run_stem(const StudyConfig& cfg, const std::string& strategy, int k);

// What ddlrun said, in a run's log (DIR/<run_stem(strategy, 1)>.log), about a link setting it could not
// emulate in full (e.g. no netem: the rate without the delay); empty when nothing.
std::string link_warning(const StudyConfig& cfg, const std::string& dir, const std::string& strategy);

}  // namespace ddl::apps
