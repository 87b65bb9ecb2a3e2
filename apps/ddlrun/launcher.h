// The ddlrun supervisor: starts the workers of one node, relays their output (rank 0's as
// is, other ranks' problems prefixed "[rank r/N] "; output_relay.h), forwards SIGINT/SIGTERM,
// and when one worker fails stops the rest (SIGTERM, then SIGKILL after a grace period) and
// reports which rank failed and how.
// `max_restarts` reruns the whole group; node 0 also serves the rendezvous store.
#pragma once

#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddl::cluster {
class Cluster;
}  // namespace ddl::cluster

namespace ddl::launcher {

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
  // Emulated hosts (ddlrun --hosts, cluster/cluster.h): the nproc workers are the whole job,
  // rank r on host r / ranks_per_host, the store in host 0's network namespace.
  const ddl::cluster::Cluster* cluster = nullptr;
  int ranks_per_host = 1;
  std::vector<int> host_slots;  // -H with --hosts: ranks on each host, in order; empty: ranks_per_host each
  // Emulated hosts: the host of rank r, its first rank, and how many ranks it runs.
  int host_of(int rank) const {
    if (host_slots.empty()) return rank / ranks_per_host;
    int h = 0;
    for (int first = host_slots[0]; rank >= first && h + 1 < static_cast<int>(host_slots.size());)
      first += host_slots[++h];
    return h;
  }
  int first_rank_on_host(int host) const {
    int first = 0;
    for (int h = 0; h < host; ++h) first += host_slots.empty() ? ranks_per_host : host_slots[h];
    return first;
  }
  int ranks_on_host(int host) const { return host_slots.empty() ? ranks_per_host : host_slots[host]; }
  // What the console shows and where output is kept: see Note [Worker output] (output_relay.h).
  bool all_ranks = false;                   // --all-ranks / --verbose: every rank's lines, prefixed
  std::string log_dir;                      // --log-dir: each rank's whole output in DIR/rank<r>.log (DIR exists)
  std::vector<std::shared_ptr<FILE>> logs;  // those files, opened by main (open_rank_logs, output_relay.h)
  std::vector<std::string> command;         // program and its arguments
  std::string syscalls_dir;       // --syscalls: each rank runs under strace -f -c, its summary in DIR/rank<r>.strace
  std::string strace;             // strace's path
  std::string setpriv;            // setpriv's path ("" if missing): ties the traced program to strace
  std::vector<std::string> argv;  // ddlrun's own command line, to show other nodes theirs
  int expected_world = 0;         // --hostfile / -H: the sum of its slots (node_agreement.h); 0: none
  bool args_may_differ = false;   // --args-may-differ: nodes compare the program, not its arguments
  // Set by the nodes' rendezvous (node_agreement.h), which lets nodes run different counts.
  int first_rank_of_node = -1;  // this node's first rank; -1: node_rank * nproc
  int world_size = 0;           // every node's workers; 0: nproc * nnodes
  int first_rank() const { return first_rank_of_node >= 0 ? first_rank_of_node : node_rank * nproc; }
  // The first rank the nodes' rendezvous gave this node, for main after run() (-1: none).
  std::shared_ptr<int> met_first_rank = std::make_shared<int>(-1);
  int world() const { return world_size > 0 ? world_size : nproc * nnodes; }
  // Elastic rounds (elastic_agent.h): polled while the workers run; true stops them all
  // (SIGTERM, then SIGKILL after the grace) and the attempt ends as Stopped.
  std::function<bool()> stop_check;
  std::vector<std::pair<std::string, std::string>> extra_env;  // given to every worker, after the rest
  std::string host_label;  // this node's name in messages about its ranks ("": none; --hosts names its own)
  std::string flight_dir;  // the ranks' flight-recorder dumps and the verdict (flight_watch.h); "": off
};

class OutputRelay;
struct RelayOptions;
// What the relay of this node's workers shows and logs (output_relay.h).
RelayOptions relay_options(const Config& cfg);
struct Outcome {
  enum Kind { Ok, Failed, Interrupted, Stopped } kind = Ok;
  int exit_code = 0;
};
// One attempt: starts this node's workers (ranks node_rank * nproc + i of nproc * nnodes,
// the store at master_addr:port, DDL_RESTART_COUNT = attempt), supervises them, returns
// when all have exited. run() loops over it; so does the elastic agent, once per round.
Outcome run_attempt(const Config& cfg, int attempt, const std::string& port, const std::string& token,
                    const std::string& run_id, OutputRelay& relay);
// Installs the handlers run_attempt relies on (SIGCHLD, the stop signals, the self-pipe).
void install_signal_handlers();

// Runs the job; returns ddlrun's exit code (0 when every worker exited 0; the failing
// worker's status, or 128 + signal, otherwise).
int run(const Config& cfg);

// SIGINT, SIGTERM and SIGHUP: what stops a job. main() blocks them while it builds emulated
// hosts; run() unblocks and handles them, so the hosts are always torn down again.
sigset_t stop_signals();

}  // namespace ddl::launcher
