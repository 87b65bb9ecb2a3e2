// ddlrun --hosts N --nnodes MIN:MAX: an elastic job on emulated hosts (docs/cluster.md,
// "Elastic drills"). One elastic agent per host, living inside the host (its PID namespace),
// so --power-off hostI=T, which kills the host's init at T seconds, takes the agent, its
// workers and its store with it; --power-on hostI=T starts the host again and a fresh agent
// there, which asks to join. A host whose first event is --power-on starts powered off.
// --power-control FILE gives such events by appending lines to FILE.
#pragma once

#include <string>
#include <vector>

#include "apps/ddlrun/elastic_agent.h"
#include "apps/ddlrun/launcher.h"

namespace ddl::cluster {
class Cluster;
}

namespace ddl::launcher::elastic {

struct PowerEvent {
  int host = 0;
  double at_s = 0;
  bool on = false;
};

// Parses "hostI=T" (T seconds after the agents start); throws std::invalid_argument.
PowerEvent parse_power_event(const std::string& text, bool on, int hosts);

// Runs the agents of the cluster's hosts 0..hosts-1 (cfg.nproc workers each) and the events until every agent has
// exited; returns 0 when the job finished (some agent's workers succeeded and no agent of a powered host failed).
// `control` (--power-control, "" for none): a file whose appended lines "off hostI" and
// "on hostI" act as they come (what a test drives the drill with, by training progress).
int run_hosts(const Config& cfg, ddl::cluster::Cluster& cluster, int hosts, ElasticSpec spec,
              std::vector<PowerEvent> events, const std::string& control);

}  // namespace ddl::launcher::elastic
