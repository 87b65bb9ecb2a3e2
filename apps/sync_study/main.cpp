// sync_study: the gradient-synchronisation study (Wisconsin CS744 assignment 2; parameter
// server vs ring all-reduce vs step-wise averaging as bandwidth shrinks). It runs the same short training once per
// strategy on N workers,
//   ddlrun --nproc N train_cifar --sync S --metrics DIR/S.jsonl ...
// reads every worker's metrics summary and writes DIR/study.csv and
// DIR/study.md: time per iteration, communication wait, bytes per worker,
// CPU %, peak memory, final loss and accuracy, and which strategy was fastest.
//   build/apps/sync_study --nproc 2 --dataset synthetic --out study/
// With --hosts N --links 10mbit,100mbit,1gbit it runs every strategy on N emulated
// hosts (ddlrun --hosts N --link RATE) at each link setting, and writes one table per
// setting (DIR/study-100mbit.md, .csv) and the summary DIR/study-sweep.md, .csv.
// Stragglers on emulated hosts: --cpu hostI=FRACTION and --link hostI=RATE go to ddlrun.
// --repeat N runs each configuration N times and reports means with min–max ranges;
// --print-commands prints the runs' command lines and runs nothing.
// Flags after "--" go to train_cifar unchanged. --plugin FILE.so adds a student's
// strategies (docs/sync.md); by default every registered strategy runs.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <optional>

#include "apps/sync_study/study_html.h"
#include "apps/sync_study/study_run.h"
#include "apps/sync_study/study_sweep.h"
#include <ddl/dist/sync/plugin.h>
#include <ddl/dist/sync/registry.h>

namespace fs = std::filesystem;
using namespace ddl::apps;

int main(int argc, char** argv) try {
  StudyConfig cfg;
  std::string out = "study", links;
  std::vector<std::string> strategies;  // default: every registered strategy's example spec
  std::vector<std::string> cpus, host_links;
  bool list = false, print_commands = false;
  CLI::App app{"Run one short training per gradient-synchronisation strategy and compare them (study.md, study.csv)."};
  auto* nproc = app.add_option("--nproc", cfg.nproc, "workers")->check(CLI::Range(2, 64))->capture_default_str();
  auto* hosts = app.add_option("--hosts", cfg.hosts, "emulated hosts, one worker each (ddlrun --hosts; needs root)")
                    ->check(CLI::Range(2, 64))
                    ->excludes(nproc);
  app.add_option("--links", links,
                 "with --hosts: link settings RATE[/DELAY[/LOSS]], comma-separated, e.g. 10mbit,100mbit/20ms,1gbit")
      ->needs(hosts);
  app.add_option("--cpu", cpus,
                 "with --hosts: hostI=FRACTION, a CPU quota for that host (a straggler; ddlrun --cpu), repeatable")
      ->needs(hosts);
  app.add_option("--link", host_links,
                 "with --hosts: hostI=RATE[/DELAY[/LOSS]], one host's link instead of --links' (ddlrun --link "
                 "hostI=...), repeatable")
      ->needs(hosts);
  app.add_option("--repeat", cfg.repeat,
                 "runs per strategy (and link setting); tables show the mean with the min–max over the runs")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_flag("--print-commands", print_commands,
               "print the command line of every run (ddlrun ... train_cifar ...) and exit without running");
  app.add_option("--out", out, "output directory")->capture_default_str();
  app.add_option("--dataset", cfg.dataset, "train_cifar --dataset")->capture_default_str();
  app.add_option("--model", cfg.model, "train_cifar --model")->capture_default_str();
  app.add_option("--strategies", strategies,
                 "strategies to compare (default: every registered one, " + ddl::dist::sync_strategy_usages(", ") +
                     " with local-sgd:4, and those of --plugin)");
  app.add_option("--plugin", cfg.plugins,
                 "shared library of strategies (repeatable), loaded here and by every train_cifar run (docs/sync.md)");
  app.add_flag("--list-strategies", list,
               "print the registered strategies (with --plugin's), one per line: spec, exact or not, help; then exit");
  app.add_option("--epochs", cfg.epochs, "epochs per run")
      ->check(CLI::Range(int64_t{1}, int64_t{1000}))
      ->capture_default_str();
  app.add_option("--batch-size", cfg.batch, "batch per worker")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--train-samples", cfg.train_samples, "training samples")->capture_default_str();
  app.add_option("--test-samples", cfg.test_samples, "test samples")->capture_default_str();
  app.add_option("--seed", cfg.seed, "seed (same for every strategy)")->capture_default_str();
  app.add_flag("--shm", cfg.shm,
               "let all_reduce run through shared memory (faster for ddp and allreduce on one host; by default "
               "every strategy uses TCP, so they compare on one transport)");
  app.add_option("--trace", cfg.trace,
                 "write each run's timeline (train_cifar --trace) to FILE with the strategy, and in a sweep the link, "
                 "before the extension: t.json -> t.ring.json, t.ring.100mbit.json (docs/trace.md)");
  app.add_option("extra", cfg.extra, "more train_cifar flags, after --");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // --help: 0; a flag error is a usage error, 2, as in ddlrun
    return rc == 0 ? 0 : 2;
  }
  try {  // the flags sync_study checks itself: usage errors too
    if (cfg.hosts > 0 && links.empty()) throw CLI::RequiredError("--links (with --hosts)");
    for (const auto& c : cpus) cfg.cpu.push_back(host_cpu_arg(c, cfg.hosts));
    for (const auto& l : host_links) cfg.host_links.push_back(host_link_arg(l, cfg.hosts));
  } catch (const std::exception& e) {
    std::cerr << "sync_study: error: " << e.what() << "\n";
    return 2;
  }
  // The plugins load here too, to check the names and know which strategies are exact;
  // train_cifar gets absolute paths, since a run may start elsewhere.
  for (std::string& p : cfg.plugins) {
    ddl::dist::load_sync_plugin(p);
    p = fs::absolute(p).string();
  }
  if (list) {
    for (const auto& s : ddl::dist::sync_strategies())
      std::cout << s.example() << '\t' << (s.info.averages_gradients ? "exact" : "model-averaging") << '\t'
                << s.info.help << '\n';
    return 0;
  }
  if (strategies.empty())
    for (const auto& s : ddl::dist::sync_strategies()) strategies.push_back(s.example());
  for (const std::string& s : strategies)
    if (const std::string problem = ddl::dist::sync_spec_problem(s); !problem.empty()) {
      std::cerr << "--strategies: " << problem << "\n";
      return 2;
    }

  cfg.bin_dir = fs::canonical("/proc/self/exe").parent_path().string();
  if (print_commands) {  // what would run, in order; nothing is written
    if (cfg.hosts > 0) cfg.nproc = cfg.hosts;
    std::vector<std::optional<LinkSetting>> settings;
    if (cfg.hosts == 0) settings.emplace_back();
    for (const auto& l : cfg.hosts > 0 ? parse_links(links) : std::vector<LinkSetting>{}) settings.emplace_back(l);
    for (const auto& link : settings)
      for (const std::string& s : strategies)
        for (int k = 1; k <= cfg.repeat; ++k) {
          const fs::path dir = link ? fs::path(out) / link->label : fs::path(out);
          std::cout << train_command(cfg, s, (dir / (run_stem(cfg, s, k) + ".jsonl")).string(), link ? &*link : nullptr,
                                     k)
                    << "\n";
        }
    return 0;
  }
  fs::create_directories(out);
  if (cfg.hosts == 0) {  // every worker on this machine
    std::vector<StudyRow> rows;
    for (const std::string& s : strategies) {
      auto row = run_strategy(cfg, s, out, nullptr);
      if (!row) return 1;
      rows.push_back(*row);
    }
    const std::string transport =
        cfg.shm
            ? "all_reduce went through shared memory (--shm); every other collective and send/recv over TCP loopback."
            : "Every strategy talked over TCP loopback (Gloo), all_reduce included (run with --shm for shared memory).";
    write_study(out, rows, cfg.nproc, cfg.dataset, cfg.model, transport);
    write_study_html(out, rows,
                     "sync_study: " + std::to_string(cfg.nproc) + " workers, " + cfg.model + " on " + cfg.dataset);
    std::cout << "sync_study: wrote " << (fs::path(out) / "study.md").string() << ", study.csv and study.html\n";
    if (!cfg.trace.empty())
      std::cout << "sync_study: timelines in " << trace_path(cfg.trace, run_stem(cfg, "<strategy>", 1), nullptr)
                << "\n";
    return 0;
  }

  // The sweep: every strategy at every link setting, each on cfg.hosts emulated hosts.
  cfg.nproc = cfg.hosts;
  std::vector<SweepSetting> sweep;
  for (const LinkSetting& link : parse_links(links)) {
    const std::string dir = (fs::path(out) / link.label).string();  // logs and metrics
    fs::create_directories(dir);
    SweepSetting setting{link, {}};
    for (const std::string& s : strategies) {
      auto row = run_strategy(cfg, s, dir, &link);
      if (!row) return 1;
      setting.rows.push_back(*row);
    }
    std::string transport =
        "Each worker ran on its own emulated host (network namespace, private /dev/shm) "
        "and talked over TCP through its host's link, shaped to " +
        link.spec + " both ways; the hosts share this machine's cores (1 thread per worker).";
    for (const auto& l : cfg.host_links) transport += " Straggler link (ddlrun --link): " + l + ".";
    for (const auto& c : cfg.cpu) transport += " Straggler CPU quota (ddlrun --cpu, CPUs): " + c + ".";
    if (const std::string warning = link_warning(cfg, dir, strategies.front()); !warning.empty())
      transport += " ddlrun said: " + warning;
    write_study(out, setting.rows, cfg.hosts, cfg.dataset, cfg.model, transport, "study-" + link.label, link.spec);
    std::cout << "sync_study: wrote " << (fs::path(out) / ("study-" + link.label + ".md")).string() << " and .csv\n";
    sweep.push_back(std::move(setting));
  }
  write_sweep(out, sweep, cfg.hosts, cfg.dataset, cfg.model);
  write_sweep_html(out, sweep,
                   "sync_study: " + std::to_string(cfg.hosts) + " hosts, " + cfg.model + " on " + cfg.dataset);
  std::cout << "sync_study: wrote " << (fs::path(out) / "study-sweep.md").string()
            << ", study-sweep.csv and study.html\n";
  if (!cfg.trace.empty()) {
    LinkSetting any;
    any.label = "<link>";
    std::cout << "sync_study: timelines in " << trace_path(cfg.trace, run_stem(cfg, "<strategy>", 1), &any) << "\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "sync_study: error: " << e.what() << "\n";
  return 1;
}
