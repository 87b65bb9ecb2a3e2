// ddlrun: start N copies of a program as the ranks of one data-parallel job.
//   ddlrun --nproc 2 build/apps/train_cifar --epochs 1
//   ddlrun --nproc 4 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --master-port 29500 prog
// Each worker gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
// (see dist/env.h); ddl::dist::init_process_group() reads them.
#include <CLI/CLI.hpp>
#include <iostream>

#include "apps/ddlrun/launcher.h"

int main(int argc, char** argv) {
  ddl::launcher::Config cfg;
  CLI::App app{"ddlrun: launch a ddl program as N ranks of a distributed job"};
  app.add_option("--nproc,--nproc-per-node", cfg.nproc, "workers on this node")->required()->check(CLI::Range(1, 4096));
  app.add_option("--nnodes", cfg.nnodes, "number of nodes")->check(CLI::Range(1, 65536));
  app.add_option("--node-rank", cfg.node_rank, "this node's index in [0, nnodes)");
  auto* master_addr = app.add_option("--master-addr", cfg.master_addr, "address of node 0 (where the store runs)");
  app.add_option("--master-port", cfg.master_port, "store port on node 0 (0: pick a free one)")
      ->check(CLI::Range(0, 65535));
  app.add_option("--max-restarts", cfg.max_restarts, "restart the whole group this many times")
      ->check(CLI::Range(0, 1000));
  app.add_option("--grace", cfg.grace_seconds, "seconds between SIGTERM and SIGKILL when stopping");
  app.add_option("--timeout", cfg.timeout_seconds,
                 "seconds each worker waits for the others (rendezvous, each collective) before failing; sets "
                 "DDL_TIMEOUT (default: inherited, else 300)")
      ->check(CLI::Range(0.0, 1e7));
  bool rank0_store = false;
  app.add_flag("--rank0-store", rank0_store,
               "let rank 0 serve the rendezvous store (for programs with their own store, e.g. PyTorch)");
  // Everything from the program name on belongs to the program, options included.
  app.prefix_command();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  cfg.command = app.remaining();
  cfg.argv.assign(argv, argv + argc);
  cfg.launcher_store = !rank0_store;
  if (cfg.command.empty()) {
    std::cerr << "ddlrun: no program given\n" << app.help();
    return 2;
  }
  if (cfg.node_rank < 0 || cfg.node_rank >= cfg.nnodes) {
    std::cerr << "ddlrun: --node-rank " << cfg.node_rank << " is outside [0, " << cfg.nnodes << ")\n";
    return 2;
  }
  if (cfg.nnodes > 1 && cfg.master_port == 0) {
    std::cerr << "ddlrun: with --nnodes > 1, give --master-port (every node must agree on it)\n";
    return 2;
  }
  // Across nodes 127.0.0.1 is wrong for everyone but node 0, which serves the store itself.
  if (cfg.nnodes > 1 && master_addr->count() == 0) {
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
  try {
    return ddl::launcher::run(cfg);
  } catch (const std::exception& e) {
    std::cerr << "ddlrun: " << e.what() << "\n";
    return 1;
  }
}
