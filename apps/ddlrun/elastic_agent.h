// ddlrun's elastic agent (ddlrun --nnodes MIN:MAX; docs/dist.md "Elastic jobs"): one per
// node, as torchrun's. It serves its candidate store, joins rendezvous rounds
// (elastic_rendezvous.h), starts this node's workers at each round's world size, and
// restarts them when membership changes. --hosts N with --nnodes MIN:MAX runs one agent per
// emulated host (elastic_hosts.cpp), where a host can be powered off and on.
#pragma once

#include <string>
#include <vector>

#include "apps/ddlrun/launcher.h"

namespace ddl::launcher::elastic {

struct ElasticSpec {
  int min_nodes = 1, max_nodes = 1;
  int node_id = 0;                      // --node-rank: this node's place among the candidates
  std::vector<std::string> candidates;  // --master-addr A,B,...: node i's store address
  std::string bind;                     // where this node's store listens ("": candidates[node_id])
  double last_call_s = 2.0;             // --rdzv-last-call
  double join_timeout_s = 600;          // --rdzv-timeout
};

// Runs this node's agent until the job ends; returns ddlrun's exit code. `cfg` gives the
// workers (nproc, command, max_restarts, grace, timeout, extra_env); its nnodes, node_rank,
// master_addr and stop_check are set per round. Failures count against max_restarts;
// restarts for a membership change do not (as in torchrun).
int run_agent(Config cfg, const ElasticSpec& spec, const std::string& token);

}  // namespace ddl::launcher::elastic
