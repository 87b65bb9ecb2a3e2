// Powering an emulated host off and on (see cluster.h): what elastic jobs are drilled with
// (ddlrun --hosts N --nnodes MIN:MAX --power-off/--power-on, docs/cluster.md).
#include <ddl/cluster/cluster.h>

namespace ddl::cluster {

void Cluster::power_off(int host) {
  // Killing pid 1 of the host's PID namespace ends every process in it (pid_namespaces(7)).
  stop_holder(holders_.at(host));
}

void Cluster::power_on(int host) {
  Holder& h = holders_.at(host);
  if (h.pid > 0) return;
  h = start_holder(job_ + "-host" + std::to_string(host), host_name(host));
}

}  // namespace ddl::cluster
