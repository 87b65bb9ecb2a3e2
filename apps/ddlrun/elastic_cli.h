// ddlrun --nnodes MIN:MAX (docs/dist.md, "Elastic jobs"): what main() hands over once it has
// parsed the flags. Checks the elastic flags (2 on a usage error, saying what to give), then
// runs this node's agent (elastic_agent.h), or with --hosts builds the hosts through main's
// set-up and runs one agent per emulated host with the power drills (elastic_hosts.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/ddlrun/elastic_agent.h"
#include "apps/ddlrun/launcher.h"

namespace ddl::cluster {
class Cluster;
}

namespace ddl::launcher::elastic {

struct ElasticFlags {
  std::vector<std::string> power_off, power_on;  // --power-off, --power-on: hostI=T
  std::string power_control;                     // --power-control FILE
  bool addr_given = false;                       // --master-addr was given
  bool syscalls = false;                         // --syscalls (refused)
};

// hosts_count: --hosts (0: none). set_up_hosts builds them (main's checks and messages) and
// returns main's exit code for a failure, 0 when they are up.
int run_elastic(Config& cfg, ElasticSpec& elastic, int hosts_count, const ElasticFlags& flags,
                const std::function<int(std::unique_ptr<ddl::cluster::Cluster>&)>& set_up_hosts);

}  // namespace ddl::launcher::elastic
