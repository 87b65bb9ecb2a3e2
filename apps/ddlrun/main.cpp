// ddlrun: start N copies of a program as the ranks of one data-parallel job.
//   ddlrun --nproc 2 build/apps/train_cifar --epochs 1
//   ddlrun --nproc 4 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --master-port 29500 prog
// Each worker gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
// (see dist/env.h); ddl::dist::init_process_group() reads them.
//   ddlrun --hosts 3 --link 100mbit build/apps/train_cifar ...   (emulated hosts: docs/cluster.md)
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <tuple>

#include "apps/common/finite_range.h"
#include "apps/ddlrun/elastic_cli.h"
#include "apps/ddlrun/elastic_rendezvous.h"
#include "apps/ddlrun/flight_watch.h"
#include "apps/ddlrun/launch_flags.h"
#include "apps/ddlrun/launcher.h"
#include "apps/ddlrun/output_relay.h"
#include "apps/ddlrun/syscalls.h"
#include <ddl/cluster/cluster.h>
#include <ddl/cluster/network.h>
#include <ddl/cluster/rootless.h>
#include <ddl/dist/transport/shm_segment.h>

namespace {
// --hosts: checks the flags and the privilege, builds the hosts (exit status 2 on a usage
// or privilege error), and points the launcher at them.
int set_up_hosts(ddl::launcher::Config& cfg, ddl::cluster::Spec& spec, const std::vector<std::string>& links,
                 const std::vector<std::string>& cpus, const std::vector<std::string>& memory,
                 const std::vector<std::string>& flaps, bool nproc_given,
                 std::unique_ptr<ddl::cluster::Cluster>& cluster) {
  if (nproc_given || cfg.nnodes > 1 || cfg.node_rank > 0) {
    std::cerr << "ddlrun: --hosts makes the whole job on this machine: give --nproc-per-host, not --nproc, "
                 "--nnodes or --node-rank\n";
    return 2;
  }
  if (links.empty()) {
    std::cerr << "ddlrun: --hosts needs --link RATE[,DELAY[,LOSS]] (e.g. --link 100mbit)\n";
    return 2;
  }
  try {
    for (const auto& l : links)
      if (l.find('=') == std::string::npos) ddl::cluster::apply_link_flag(spec, l);
    if (spec.link.rate.empty())
      throw ddl::cluster::UsageError("--link: give every host's RATE (then hostI=RATE overrides)");
    for (const auto& l : links)
      if (l.find('=') != std::string::npos) ddl::cluster::apply_link_flag(spec, l);
    for (const auto& c : cpus) ddl::cluster::apply_cpu_flag(spec, c);
    for (const auto& m : memory) ddl::cluster::apply_memory_flag(spec, m);
    for (const auto& f : flaps) ddl::cluster::apply_flap_flag(spec, f);
  } catch (const ddl::cluster::UsageError& e) {
    std::cerr << "ddlrun: " << e.what() << "\n";
    return 2;
  }
  // Root without the capabilities was restricted on purpose (setpriv, capsh, a container):
  // only an ordinary user tries a user namespace of its own.
  std::string missing = ddl::cluster::missing_privilege(), rootless_error;
  if (!missing.empty() && geteuid() != 0) {
    if (!spec.cpu_of.empty() || !spec.memory_of.empty()) {
      const char* flag = spec.cpu_of.empty() ? "--memory" : "--cpu";
      std::cerr << "ddlrun: " << flag << " needs root (cgroups are the machine's); without root, drop " << flag << "\n";
      return 2;
    }
    rootless_error = ddl::cluster::enter_rootless();
    if (rootless_error.empty()) {
      missing = ddl::cluster::missing_privilege();
      std::cerr << "ddlrun: not root: the hosts live in a user namespace of this job (rootless; docs/cluster.md)\n";
    }
  }
  if (!missing.empty()) {
    std::cerr << "ddlrun: --hosts needs " << missing
              << ", which this process lacks (to create network namespaces, veths and qdiscs, and to mount each "
                 "host's /dev/shm). Run it as root (e.g. sudo ddlrun --hosts ...)";
    if (geteuid() == 0)
      std::cerr << "; this root process had them removed (its capability bounding set), so ddlrun does not try "
                   "a user namespace\n";
    else
      std::cerr << ", or enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 where it "
                   "exists, and user.max_user_namespaces > 0); a user namespace failed here: "
                << rootless_error << "\n";
    return 2;
  }
  // A SIGINT or SIGTERM while the hosts are being built waits until the launcher handles it,
  // so the hosts are removed again (launcher.cpp unblocks them).
  const sigset_t stops = ddl::launcher::stop_signals();
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  try {
    cluster = std::make_unique<ddl::cluster::Cluster>(spec);
  } catch (const std::exception& e) {
    std::cerr << "ddlrun: building the emulated hosts failed: " << e.what() << "\n";
    return 1;
  }
  std::cerr << cluster->summary();
  cfg.cluster = cluster.get();
  cfg.ranks_per_host = spec.nproc_per_host;
  cfg.nproc = cfg.first_rank_on_host(spec.hosts);  // with -H, the hosts' slots added up
  cfg.master_addr = ddl::cluster::host_address(0);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  ddl::launcher::Config cfg;
  CLI::App app{"ddlrun: launch a ddl program as N ranks of a distributed job"};
  auto* nproc = app.add_option("--nproc,--nproc-per-node,--nproc_per_node", cfg.nproc, "workers on this node")
                    ->check(CLI::Range(1, 4096));
  ddl::cluster::Spec spec;
  std::vector<std::string> links, cpus, memory, flaps;
  bool cleanup = false;
  app.add_option("--hosts", spec.hosts, "run the job on this many emulated hosts (docs/cluster.md; needs root)")
      ->check(CLI::Range(1, 250));
  app.add_option("--nproc-per-host", spec.nproc_per_host, "with --hosts: workers per host (default 1)")
      ->check(CLI::Range(1, 64));
  app.add_option("--link", links, "with --hosts: RATE[,DELAY[,LOSS]] of every link, or hostI=RATE[,...] for one")
      ->allow_extra_args(false);
  app.add_option("--cpu", cpus, "with --hosts: hostI=FRACTION, a CPU quota for that host's processes")
      ->allow_extra_args(false);
  app.add_option("--memory", memory,
                 "with --hosts: hostI=BYTES (K, M, G suffixes), a memory limit for that host's processes, no swap; "
                 "a rank the OOM killer ends is reported naming its host")
      ->allow_extra_args(false);
  app.add_option("--link-flap", flaps,
                 "with --hosts: hostI=T[,D], take that host's link down T seconds after the start for D seconds "
                 "(default 1), then up (failure injection, docs/cluster.md)")
      ->allow_extra_args(false);
  bool syscalls = false;
  int syscalls_top = 12;
  app.add_flag("--syscalls", syscalls,
               "count each rank's system calls (strace -f -c: all its threads and children) and print one table at "
               "the end: calls per syscall per rank, the top --syscalls-top, the rest, the total. Counts are exact, "
               "times are not: strace stops the rank at every call (a 2-rank MLP step took 1.7x as long; "
               "docs/dist.md, \"Counting system calls\")");
  app.add_option("--syscalls-top", syscalls_top, "rows of the --syscalls table")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_flag("--cleanup", cleanup,
               "remove what killed --hosts launchers, and ranks killed while setting up shared memory, left "
               "behind, then exit");
  std::string nnodes = "1";
  app.add_option("--nnodes", nnodes,
                 "number of nodes, or MIN:MAX for an elastic job (nodes may leave and join; docs/dist.md, "
                 "\"Elastic jobs\")");
  ddl::launcher::elastic::ElasticSpec elastic;
  std::vector<std::string> power_off, power_on;
  app.add_option("--rdzv-last-call", elastic.last_call_s,
                 "elastic: once MIN nodes have joined a round, close it this many seconds after the last join")
      ->check(ddl::apps::FiniteRange(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--rdzv-timeout", elastic.join_timeout_s, "elastic: seconds a node waits to be admitted to a round")
      ->check(ddl::apps::FiniteRange(1.0, 1e6))
      ->capture_default_str();
  app.add_option("--power-off", power_off, "with --hosts and --nnodes MIN:MAX: hostI=T, cut that host's power T s in")
      ->allow_extra_args(false);
  app.add_option("--power-on", power_on, "with --hosts and --nnodes MIN:MAX: hostI=T, start that host T s in")
      ->allow_extra_args(false);
  std::string power_control;
  app.add_option("--power-control", power_control,
                 "with --hosts and --nnodes MIN:MAX: a file whose appended lines \"off hostI\" / \"on hostI\" act "
                 "at once");
  auto* node_rank = app.add_option("--node-rank,--node_rank", cfg.node_rank, "this node's index in [0, nnodes)");
  auto* master_addr =
      app.add_option("--master-addr,--master_addr", cfg.master_addr, "address of node 0 (where the store runs)");
  app.add_option("--master-port,--master_port", cfg.master_port, "store port on node 0 (0: pick a free one)")
      ->check(CLI::Range(0, 65535));
  std::string hostfile, host_list;
  app.add_option("--hostfile", hostfile,
                 "Open MPI hostfile, a node a line: 'host slots=N'. Every node runs ddlrun with the same file; each "
                 "starts its line's slots, node 0 is the first line (docs/dist.md, \"Hostfiles and uneven nodes\")");
  app.add_option("-H", host_list,
                 "host:slots,... as --hostfile, on the command line; with --hosts N, host0:2,host1:1,... gives the "
                 "emulated hosts different counts");
  app.add_flag("--args-may-differ", cfg.args_may_differ,
               "across nodes: let the program's arguments differ between nodes (per-node output files); the "
               "program, --nnodes and the ddl version must still agree");
  app.add_option("--max-restarts,--max_restarts", cfg.max_restarts, "restart the whole group this many times")
      ->check(CLI::Range(0, 1000));
  app.add_option("--grace", cfg.grace_seconds, "seconds between SIGTERM and SIGKILL when stopping")
      ->check(ddl::apps::FiniteRange(0.0, 3600.0));
  app.add_option("--timeout", cfg.timeout_seconds,
                 "seconds each worker waits for the others (rendezvous, each collective) before failing; sets "
                 "DDL_TIMEOUT (default: inherited, else 300)")
      ->check(ddl::apps::FiniteRange(0.0, 1e7));
  app.add_flag("--all-ranks,-v,--verbose", cfg.all_ranks,
               "show every rank's output, each line prefixed [rank r/N] (default: rank 0's, and other ranks' "
               "stderr and warning or error lines)");
  app.add_option("--log-dir", cfg.log_dir, "write each rank's whole output to DIR/rank<r>.log (DIR is created)");
  bool rank0_store = false;
  app.add_flag("--rank0-store", rank0_store,
               "let rank 0 serve the rendezvous store (for programs with their own store, e.g. PyTorch)");
  // Everything from the program name on belongs to the program, options included.
  app.prefix_command();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every flag error (unknown, missing value, out of range) is a usage error: 2.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (cleanup) {
    // Shared-memory segments of groups whose every rank was killed during set-up, under a
    // launcher that could not remove them (Note [Segment names] in dist/transport/shm_segment.cpp).
    for (const std::string& name : ddl::dist::detail::remove_shm_segments())
      std::printf("ddlrun --cleanup: removed /dev/shm/%s (its creator is gone)\n", name.c_str());
    return ddl::cluster::cleanup_stale();
  }
  const bool is_elastic = nnodes.find(':') != std::string::npos;
  try {
    std::tie(elastic.min_nodes, elastic.max_nodes) = ddl::launcher::elastic::parse_nnodes(nnodes);
  } catch (const std::exception& e) {
    std::cerr << "ddlrun: " << e.what() << "\n";
    return 2;
  }
  cfg.nnodes = is_elastic ? 1 : elastic.max_nodes;  // elastic: each round sets it
  if (!is_elastic && (!power_off.empty() || !power_on.empty() || !power_control.empty())) {
    std::cerr << "ddlrun: --power-off, --power-on and --power-control drill elastic jobs: give --hosts N and "
                 "--nnodes MIN:MAX\n";
    return 2;
  }
  cfg.command = app.remaining();
  if (int rc = ddl::launcher::refuse_unknown_flag(cfg.command); rc != 0) return rc;
  if (is_elastic && (!hostfile.empty() || !host_list.empty())) {
    std::cerr << "ddlrun: --nnodes MIN:MAX runs --nproc workers on every node (each node its own ddlrun): "
                 "--hostfile and -H are for fixed jobs\n";
    return 2;
  }
  if (int rc = ddl::launcher::apply_host_flags(cfg, spec.hosts, spec.nproc_per_host, hostfile, host_list,
                                               node_rank->count() > 0, master_addr->count() > 0, nproc->count() > 0);
      rc != 0)
    return rc;
  cfg.argv.assign(argv, argv + argc);
  cfg.launcher_store = !rank0_store;
  if (spec.hosts == 0 && nproc->count() == 0 && hostfile.empty() && host_list.empty()) {
    std::cerr << "ddlrun: give --nproc (or --hosts)\n" << app.help();
    return 2;
  }
  if (spec.hosts == 0 && (!links.empty() || !cpus.empty() || !memory.empty() || !flaps.empty())) {
    std::cerr << "ddlrun: --link, --cpu, --memory and --link-flap shape emulated hosts: give --hosts N too\n";
    return 2;
  }
  if (cfg.command.empty()) {
    std::cerr << "ddlrun: no program given\n" << app.help();
    return 2;
  }
  if (is_elastic)
    return ddl::launcher::elastic::run_elastic(
        cfg, elastic, spec.hosts, {power_off, power_on, power_control, master_addr->count() > 0, syscalls},
        [&](std::unique_ptr<ddl::cluster::Cluster>& cluster) {
          const int rc = set_up_hosts(cfg, spec, links, cpus, memory, flaps, nproc->count() > 0, cluster);
          cfg.nproc = spec.nproc_per_host;  // each agent's workers
          return rc;
        });
  if (cfg.node_rank < 0 || cfg.node_rank >= cfg.nnodes) {
    std::cerr << "ddlrun: --node-rank " << cfg.node_rank << " is outside [0, " << cfg.nnodes << ")\n";
    return 2;
  }
  if (cfg.nnodes > 1 && cfg.master_port == 0) {
    std::cerr << "ddlrun: with --nnodes > 1, give --master-port (every node must agree on it)\n";
    return 2;
  }
  // Across nodes 127.0.0.1 is wrong for everyone but node 0, which serves the store itself.
  if (cfg.nnodes > 1 && master_addr->count() == 0 && hostfile.empty() && host_list.empty()) {
    if (cfg.node_rank > 0 || !cfg.launcher_store) {
      std::cerr << "ddlrun: node " << cfg.node_rank << " of " << cfg.nnodes << " needs --master-addr, the "
                << "address of node 0 (where the store runs); without it the workers would "
                << (cfg.node_rank > 0 ? "look for the store on this machine\n"
                                      : "serve the store (--rank0-store) on 127.0.0.1 only\n");
      return 2;
    }
    std::cerr << "ddlrun: warning: --nnodes " << cfg.nnodes << " without --master-addr: the store listens on "
              << "every interface of this node, port " << cfg.master_port << "; give the other nodes "
              << "--master-addr <an address of this node>\n";
    cfg.store_bind = "0.0.0.0";
  }
  if (!cfg.log_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cfg.log_dir, ec);
    if (ec || access(cfg.log_dir.c_str(), W_OK | X_OK) != 0) {
      std::cerr << "ddlrun: --log-dir " << cfg.log_dir << ": cannot "
                << (ec ? "create it: " + ec.message() : std::string("write there: ") + std::strerror(errno)) << "\n";
      return 2;
    }
    // Opened before anything is set up (hosts, the store, the token banner): a file that
    // cannot be written is a usage error like the directory. Across nodes the ranks are
    // known after the nodes meet (node_agreement.h), which opens them.
    std::vector<int> ranks;
    const int local = spec.hosts > 0 ? (cfg.host_slots.empty() ? spec.hosts * spec.nproc_per_host
                                                               : cfg.first_rank_on_host(spec.hosts))
                                     : cfg.nproc;
    for (int i = 0; i < local; ++i) ranks.push_back((spec.hosts > 0 ? 0 : cfg.node_rank) * local + i);
    try {
      if (cfg.nnodes == 1) cfg.logs = ddl::launcher::open_rank_logs(cfg.log_dir, ranks);
    } catch (const std::exception& e) {
      std::cerr << "ddlrun: " << e.what() << "\n";
      return 2;
    }
  }
  std::string syscalls_tmp;  // --syscalls without --log-dir: the summaries' folder, removed at the end
  // ... on every return, also when setting up the hosts fails.
  const std::unique_ptr<std::string, void (*)(std::string*)> remove_syscalls_tmp(&syscalls_tmp, [](std::string* dir) {
    std::error_code ec;
    if (!dir->empty()) std::filesystem::remove_all(*dir, ec);
  });
  if (syscalls) {
    cfg.strace = ddl::launcher::find_strace();
    cfg.setpriv = ddl::launcher::find_in_path("setpriv");
    if (cfg.strace.empty()) {
      std::cerr << "ddlrun: --syscalls needs strace on PATH (Debian: apt-get install strace)\n";
      return 2;
    }
    if (cfg.log_dir.empty()) {
      char dir[] = "/tmp/ddlrun-syscalls.XXXXXX";
      if (!mkdtemp(dir)) {
        std::cerr << "ddlrun: --syscalls: mkdtemp: " << std::strerror(errno) << "\n";
        return 1;
      }
      syscalls_tmp = dir;
    }
    cfg.syscalls_dir = cfg.log_dir.empty() ? syscalls_tmp : cfg.log_dir;
  }
  std::string flight_tmp;  // the dumps' folder when there is no --log-dir, removed on every return
  const std::unique_ptr<std::string, void (*)(std::string*)> remove_flight_tmp(&flight_tmp, [](std::string* dir) {
    std::error_code ec;
    if (!dir->empty()) std::filesystem::remove_all(*dir, ec);
  });
  cfg.flight_dir = ddl::launcher::flight_base(cfg.log_dir, &flight_tmp);
  std::unique_ptr<ddl::cluster::Cluster> cluster;  // removed when main returns
  if (spec.hosts > 0)
    if (int rc = set_up_hosts(cfg, spec, links, cpus, memory, flaps, nproc->count() > 0, cluster); rc != 0) return rc;
  if (cluster) cluster->start_flaps();
  int rc = 1;
  try {
    rc = ddl::launcher::run(cfg);
  } catch (const std::exception& e) {
    std::cerr << "ddlrun: " << e.what() << "\n";
  }
  if (syscalls) {
    // This node's ranks, as the launcher numbers them (every rank under --hosts).
    std::vector<std::pair<int, std::map<std::string, long long>>> per_rank;
    for (int i = 0; i < cfg.nproc; ++i) {
      const int rank = (*cfg.met_first_rank >= 0 ? *cfg.met_first_rank : cfg.node_rank * cfg.nproc) + i;
      per_rank.emplace_back(
          rank, ddl::launcher::read_strace_summary(cfg.syscalls_dir + "/rank" + std::to_string(rank) + ".strace"));
    }
    std::cerr << "ddlrun: system calls per rank (strace -f -c: every thread and child of the rank; the last attempt)\n"
              << ddl::launcher::syscall_table(per_rank, syscalls_top);
  }
  return rc;
}
