// One strategy's run (see study_run.h).
#include "apps/sync_study/study_run.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "apps/common/shell_quote.h"
#include "apps/sync_study/study_stats.h"
#include "apps/sync_study/study_sweep.h"
#include <ddl/base/error.h>

namespace ddl::apps {

namespace fs = std::filesystem;

namespace {
// "host2=VALUE" -> ("2", "VALUE"), the index checked against `hosts`.
std::pair<int, std::string> host_and_value(const std::string& flag, const std::string& what, int hosts) {
  const auto eq = flag.find('=');
  const std::string name = flag.substr(0, eq == std::string::npos ? 0 : eq);
  const bool digits = name.size() > 4 && name.rfind("host", 0) == 0 && name.size() < 8 &&
                      name.find_first_not_of("0123456789", 4) == std::string::npos;
  DDL_CHECK(eq != std::string::npos && digits && eq + 1 < flag.size(), "sync_study ", what, " '", flag,
            "': give hostI=VALUE for one host, e.g. ", what == "--cpu" ? "--cpu host1=0.5" : "--link host1=10mbit");
  const int host = std::stoi(name.substr(4));
  DDL_CHECK(host < hosts, "sync_study ", what, " '", flag, "': the hosts are host0..host", hosts - 1);
  return {host, flag.substr(eq + 1)};
}
}  // namespace

std::string host_cpu_arg(const std::string& flag, int hosts) {
  const auto [host, value] = host_and_value(flag, "--cpu", hosts);
  double fraction = 0;
  size_t used = 0;
  try {
    fraction = std::stod(value, &used);
  } catch (const std::exception&) {
  }
  DDL_CHECK(used == value.size() && fraction > 0 && fraction <= 64, "sync_study --cpu '", flag,
            "': FRACTION must be a number of CPUs in (0, 64], e.g. host1=0.5 (half of one CPU)");
  return "host" + std::to_string(host) + "=" + value;
}

std::string host_link_arg(const std::string& flag, int hosts) {
  const auto [host, value] = host_and_value(flag, "--link", hosts);
  const auto parsed = parse_links(value);  // the syntax and checks of --links, one setting
  DDL_CHECK(parsed.size() == 1, "sync_study --link '", flag, "': one setting per host (RATE[/DELAY[/LOSS]])");
  return "host" + std::to_string(host) + "=" + parsed.front().ddlrun_arg;
}

std::string run_stem(const StudyConfig& cfg, const std::string& strategy, int k) {
  return cfg.repeat > 1 ? strategy + ".run" + std::to_string(k) : strategy;
}

std::string trace_path(const std::string& trace, const std::string& strategy, const LinkSetting* link) {
  const fs::path p(trace);
  const std::string tag = "." + strategy + (link ? "." + link->label : "");
  return (p.parent_path() / (p.stem().string() + tag + (p.has_extension() ? p.extension().string() : ".json")))
      .string();
}

std::string train_command(const StudyConfig& cfg, const std::string& strategy, const std::string& metrics,
                          const LinkSetting* link, int run) {
  const fs::path bin(cfg.bin_dir);
  // DDL_SHM (docs/dist.md): ring, param-server and the rest use send/recv or other
  // collectives, which always go over TCP; all_reduce would not, unless told. On emulated
  // hosts each host has its own /dev/shm, so workers on different hosts cannot share it.
  // --all-ranks: the run's log keeps every worker's lines (each names its transport), not rank 0's alone.
  std::string cmd =
      std::string("DDL_SHM=") + (cfg.shm ? "1 " : "0 ") + shell_quote((bin / "ddlrun").string()) + " --all-ranks";
  if (link) {
    cmd += " --hosts " + std::to_string(cfg.hosts) + " --link " + shell_quote(link->ddlrun_arg);
    for (const auto& l : cfg.host_links) cmd += " --link " + shell_quote(l);  // ddlrun: after every host's
    for (const auto& c : cfg.cpu) cmd += " --cpu " + shell_quote(c);
  } else
    cmd += " --nproc " + std::to_string(cfg.nproc);
  cmd += " " + shell_quote((bin / "train_cifar").string());
  for (const auto& p : cfg.plugins) cmd += " --plugin " + shell_quote(p);
  cmd += " --sync " + shell_quote(strategy) + " --dataset " + shell_quote(cfg.dataset) + " --model " +
         shell_quote(cfg.model) + " --epochs " + std::to_string(cfg.epochs) + " --batch-size " +
         std::to_string(cfg.batch) + " --train-samples " + std::to_string(cfg.train_samples) + " --test-samples " +
         std::to_string(cfg.test_samples) + " --seed " + std::to_string(cfg.seed) +
         " --threads 1 --no-progress --metrics " + shell_quote(metrics);
  if (!cfg.trace.empty()) cmd += " --trace " + shell_quote(trace_path(cfg.trace, run_stem(cfg, strategy, run), link));
  for (const auto& e : cfg.extra) cmd += " " + shell_quote(e);
  return cmd;
}

std::optional<StudyRow> run_strategy(const StudyConfig& cfg, const std::string& strategy, const std::string& dir,
                                     const LinkSetting* link) {
  std::vector<StudyRow> runs;
  for (int k = 1; k <= cfg.repeat; ++k) {
    const std::string stem = run_stem(cfg, strategy, k);
    const std::string metrics = (fs::path(dir) / (stem + ".jsonl")).string();
    const std::string log = (fs::path(dir) / (stem + ".log")).string();
    std::cout << "sync_study: " << strategy << (link ? " at " + link->spec : "")
              << (cfg.repeat > 1 ? " (run " + std::to_string(k) + " of " + std::to_string(cfg.repeat) + ")" : "")
              << " ..." << std::flush;
    const int status =
        std::system((train_command(cfg, strategy, metrics, link, k) + " > " + shell_quote(log) + " 2>&1").c_str());
    if (status != 0) {
      std::cout << " failed (see " << log << "); its last lines:\n";
      std::ifstream in(log);
      std::vector<std::string> tail;
      for (std::string line; std::getline(in, line);) {
        tail.push_back(line);
        if (tail.size() > 5) tail.erase(tail.begin());
      }
      for (const auto& line : tail) std::cout << "  " << line << "\n";
      return std::nullopt;
    }
    const int workers = link ? cfg.hosts : cfg.nproc;
    StudyRow row = read_study_row(strategy, metrics, workers);
    if (link) link_columns(row, params_from_log(log), link->rate_bits);
    std::cout << " " << row.step_ms << " ms per iteration";
    if (link) std::cout << ", comm wait " << row.comm_ms << " ms";
    std::cout << "\n";
    runs.push_back(row);
  }
  return combine_runs(runs);
}

std::string link_warning(const StudyConfig& cfg, const std::string& dir, const std::string& strategy) {
  std::ifstream in(fs::path(dir) / (run_stem(cfg, strategy, 1) + ".log"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("ddlrun: ", 0) == 0 && line.find("netem") != std::string::npos) return line.substr(8);
  return "";
}

}  // namespace ddl::apps
