// The ddlrun supervisor: starts the workers of one node, relays their output (rank 0's as
// is, other ranks' problems prefixed "[rank r/N] "; output_relay.h), forwards SIGINT/SIGTERM,
// and when one worker fails stops the rest (SIGTERM, then SIGKILL after a grace period) and
// reports which rank failed and how.
// `max_restarts` reruns the whole group; node 0 also serves the rendezvous store.
#pragma once

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace ddl::launcher {

namespace hosts {
class Cluster;
}

struct Config {
  int nproc = 1;  // workers on this node
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  std::string store_bind;  // where node 0's store listens ("0.0.0.0": every interface); "": master_addr
  int master_port = 0;     // 0: pick a free one (single node only)
  int max_restarts = 0;
  double grace_seconds = 5.0;  // between SIGTERM and SIGKILL
  double timeout_seconds = 0;  // > 0: the workers' DDL_TIMEOUT (rendezvous and each collective)
  // Node 0's launcher serves the rendezvous store. Off: rank 0 serves it (torchrun's way,
  // needed to launch programs that bring their own store, e.g. PyTorch's for a comparison).
  bool launcher_store = true;
  // Emulated hosts (ddlrun --hosts, hosts/cluster.h): the nproc workers are the whole job,
  // rank r on host r / ranks_per_host, the store in host 0's network namespace.
  const hosts::Cluster* cluster = nullptr;
  int ranks_per_host = 1;
  // What the console shows and where output is kept: see Note [Worker output] (output_relay.h).
  bool all_ranks = false;                   // --all-ranks / --verbose: every rank's lines, prefixed
  std::string log_dir;                      // --log-dir: each rank's whole output in DIR/rank<r>.log (DIR exists)
  std::vector<std::shared_ptr<FILE>> logs;  // those files, opened by main (open_rank_logs, output_relay.h)
  std::vector<std::string> command;         // program and its arguments
  std::string syscalls_dir;       // --syscalls: each rank runs under strace -f -c, its summary in DIR/rank<r>.strace
  std::string strace;             // strace's path
  std::string setpriv;            // setpriv's path ("" if missing): ties the traced program to strace
  std::vector<std::string> argv;  // ddlrun's own command line, to show other nodes theirs
  std::string flight_dir;         // the ranks' flight-recorder dumps and the verdict (flight_watch.h); "": off
};

// Runs the job; returns ddlrun's exit code (0 when every worker exited 0; the failing
// worker's status, or 128 + signal, otherwise).
int run(const Config& cfg);

// SIGINT, SIGTERM and SIGHUP: what stops a job. main() blocks them while it builds emulated
// hosts; run() unblocks and handles them, so the hosts are always torn down again.
sigset_t stop_signals();

}  // namespace ddl::launcher
