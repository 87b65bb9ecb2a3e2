// One strategy's run (see study_run.h).
#include "apps/sync_study/study_run.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "apps/common/shell_quote.h"
#include "apps/sync_study/study_sweep.h"

namespace ddl::apps {

namespace fs = std::filesystem;

std::string trace_path(const std::string& trace, const std::string& strategy, const LinkSetting* link) {
  const fs::path p(trace);
  const std::string tag = "." + strategy + (link ? "." + link->label : "");
  return (p.parent_path() / (p.stem().string() + tag + (p.has_extension() ? p.extension().string() : ".json")))
      .string();
}

std::string train_command(const StudyConfig& cfg, const std::string& strategy, const std::string& metrics,
                          const LinkSetting* link) {
  const fs::path bin(cfg.bin_dir);
  // DDL_SHM (docs/dist.md): ring, param-server and the rest use send/recv or other
  // collectives, which always go over TCP; all_reduce would not, unless told. On emulated
  // hosts each host has its own /dev/shm, so workers on different hosts cannot share it.
  // --all-ranks: the run's log keeps every worker's lines (each names its transport), not rank 0's alone.
  std::string cmd =
      std::string("DDL_SHM=") + (cfg.shm ? "1 " : "0 ") + shell_quote((bin / "ddlrun").string()) + " --all-ranks";
  if (link)
    cmd += " --hosts " + std::to_string(cfg.hosts) + " --link " + shell_quote(link->ddlrun_arg);
  else
    cmd += " --nproc " + std::to_string(cfg.nproc);
  cmd += " " + shell_quote((bin / "train_cifar").string());
  for (const auto& p : cfg.plugins) cmd += " --plugin " + shell_quote(p);
  cmd += " --sync " + shell_quote(strategy) + " --dataset " + shell_quote(cfg.dataset) + " --model " +
         shell_quote(cfg.model) + " --epochs " + std::to_string(cfg.epochs) + " --batch-size " +
         std::to_string(cfg.batch) + " --train-samples " + std::to_string(cfg.train_samples) + " --test-samples " +
         std::to_string(cfg.test_samples) + " --seed " + std::to_string(cfg.seed) +
         " --threads 1 --no-progress --metrics " + shell_quote(metrics);
  if (!cfg.trace.empty()) cmd += " --trace " + shell_quote(trace_path(cfg.trace, strategy, link));
  for (const auto& e : cfg.extra) cmd += " " + shell_quote(e);
  return cmd;
}

std::optional<StudyRow> run_strategy(const StudyConfig& cfg, const std::string& strategy, const std::string& dir,
                                     const LinkSetting* link) {
  const std::string metrics = (fs::path(dir) / (strategy + ".jsonl")).string();
  const std::string log = (fs::path(dir) / (strategy + ".log")).string();
  std::cout << "sync_study: " << strategy << (link ? " at " + link->spec : "") << " ..." << std::flush;
  const int status =
      std::system((train_command(cfg, strategy, metrics, link) + " > " + shell_quote(log) + " 2>&1").c_str());
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
  return row;
}

std::string link_warning(const std::string& dir, const std::string& strategy) {
  std::ifstream in(fs::path(dir) / (strategy + ".log"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("ddlrun: ", 0) == 0 && line.find("netem") != std::string::npos) return line.substr(8);
  return "";
}

}  // namespace ddl::apps
