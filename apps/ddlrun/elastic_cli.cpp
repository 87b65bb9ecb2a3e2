// ddlrun --nnodes MIN:MAX from main() (see elastic_cli.h): the flags' checks, then this
// node's agent or, with --hosts, the emulated hosts' agents.
#include "apps/ddlrun/elastic_cli.h"

#include <iostream>

#include "apps/ddlrun/elastic_hosts.h"
#include <ddl/cluster/cluster.h>
#include <ddl/dist/env.h>

namespace ddl::launcher::elastic {

int run_elastic(Config& cfg, ElasticSpec& elastic, int hosts_count, const ElasticFlags& flags,
                const std::function<int(std::unique_ptr<ddl::cluster::Cluster>&)>& set_up_hosts) {
  const auto& [power_off, power_on, power_control, addr_given, syscalls] = flags;
  if (!cfg.log_dir.empty() || syscalls || !cfg.launcher_store) {
    std::cerr << "ddlrun: --nnodes MIN:MAX takes neither --log-dir, --syscalls nor --rank0-store (ranks change "
                 "between rounds; the agents serve the store)\n";
    return 2;
  }
  if (hosts_count > 0) {
    std::vector<PowerEvent> events;
    try {
      for (const auto& p : power_off) events.push_back(parse_power_event(p, false, hosts_count));
      for (const auto& p : power_on) events.push_back(parse_power_event(p, true, hosts_count));
    } catch (const std::exception& e) {
      std::cerr << "ddlrun: " << e.what() << "\n";
      return 2;
    }
    if (elastic.max_nodes > hosts_count) {
      std::cerr << "ddlrun: --nnodes " << elastic.min_nodes << ":" << elastic.max_nodes << " needs at least MAX "
                << "hosts; --hosts is " << hosts_count << "\n";
      return 2;
    }
    std::unique_ptr<ddl::cluster::Cluster> cluster;  // removed when this returns
    if (int rc = set_up_hosts(cluster); rc) return rc;
    if (cfg.master_port == 0) cfg.master_port = 29400;  // every host has a network namespace of its own
    cluster->start_flaps();
    try {
      return run_hosts(cfg, *cluster, hosts_count, elastic, events, power_control);
    } catch (const std::exception& e) {
      std::cerr << "ddlrun: " << e.what() << "\n";
      return 1;
    }
  }
  if (!power_off.empty() || !power_on.empty() || !power_control.empty()) {
    std::cerr << "ddlrun: --power-off, --power-on and --power-control act on emulated hosts: give --hosts N\n";
    return 2;
  }
  if (!addr_given || cfg.master_port == 0) {
    std::cerr << "ddlrun: --nnodes MIN:MAX needs --master-addr A0,A1,... (node i's address, i-th: the hosts the "
                 "store fails over to, in order) and --master-port\n";
    return 2;
  }
  for (size_t at = 0, comma; at <= cfg.master_addr.size(); at = comma + 1) {
    comma = cfg.master_addr.find(',', at);
    if (comma == std::string::npos) comma = cfg.master_addr.size();
    elastic.candidates.push_back(cfg.master_addr.substr(at, comma - at));
  }
  if (cfg.node_rank < 0 || cfg.node_rank >= elastic.max_nodes) {
    std::cerr << "ddlrun: --node-rank " << cfg.node_rank << " is outside [0, " << elastic.max_nodes << ")\n";
    return 2;
  }
  elastic.node_id = cfg.node_rank;
  const std::string token = ddl::dist::read_job_token().value;
  if (token.empty()) {
    std::cerr << "ddlrun: an elastic job needs DDL_JOB_TOKEN (or DDL_JOB_TOKEN_FILE), the same on every node: "
                 "no node is sure to be there to make one\n";
    return 2;
  }
  try {
    return run_agent(cfg, elastic, token);
  } catch (const std::exception& e) {
    std::cerr << "ddlrun: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace ddl::launcher::elastic
