// ddlrun's flags beyond its own model: Open MPI's hostfile (--hostfile FILE, lines
// "host slots=N") and host list (-H host:slots,...), which give every node its worker count
// and node 0's address, and the flags of other launchers written before the program
// (torchrun's --rdzv_backend, ...), refused with a usage error instead of run as a program.
#pragma once

#include <string>
#include <vector>

#include "apps/ddlrun/launcher.h"

namespace ddl::launcher {

struct HostSlots {
  std::string host;
  int slots = 1;
};

// Open MPI's hostfile format (mpirun(1), "Specifying Host Nodes"): one node a line, "host",
// "host slots=N" (also max_slots=, ignored), '#' comments. Throws std::runtime_error naming
// the file and line.
std::vector<HostSlots> read_hostfile(const std::string& path);
// "-H a:2,b,c:1": host[:slots], slots 1 when left out.
std::vector<HostSlots> parse_host_list(const std::string& list);

// Sets nnodes, this node's nproc and rank, and node 0's address from `hosts`: the node is
// --node-rank when given, else the one line whose host is this machine (its name or one
// of its addresses). Returns 0, or 2 after printing the usage error.
int apply_hosts(Config& cfg, const std::vector<HostSlots>& hosts, const std::string& flag, bool node_rank_given,
                bool master_addr_given, bool nproc_given);

// With --hosts N: -H host0:2,host1:1 (or such a hostfile) gives each emulated host its
// count; the names must be the emulated ones, host0 to host<N-1>, in order. Sets
// cfg.host_slots. Returns 0, or 2 after printing the usage error.
int apply_emulated_hosts(Config& cfg, int hosts, const std::string& hostfile, const std::string& host_list);

// main's part: applies --hostfile or -H (at most one), to real nodes (apply_hosts) or,
// with --hosts N (`hosts` > 0), to the emulated ones (apply_emulated_hosts, which leaves
// `nproc_per_host` at 1). Returns 0 (also when neither is given), or 2 after the usage error.
int apply_host_flags(Config& cfg, int hosts, int& nproc_per_host, const std::string& hostfile,
                     const std::string& host_list, bool node_rank_given, bool master_addr_given, bool nproc_given);

// When the "program" ddlrun found is a flag (it did not know it), prints what to write
// instead and returns 2; otherwise 0.
int refuse_unknown_flag(const std::vector<std::string>& command);

}  // namespace ddl::launcher
