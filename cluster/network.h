// The emulated network: a "switch" namespace holding a bridge, and per host a network
// namespace joined to it by a veth pair, both ends shaped with tc (ip-netns(8), veth(4),
// tc-tbf(8), tc-netem(8)). Every interface and address lives inside the job's own
// namespaces: nothing touches the machine's interfaces, and two jobs' subnets cannot clash.
#pragma once

#include <string>

#include <ddl/cluster/spec.h>
#include <ddl/cluster/state.h>

namespace ddl::cluster {

inline constexpr const char* kHostIface = "eth0";  // each host's interface, in its own namespace

std::string host_address(int host);  // 10.99.0.<host+1>; a /24 inside the job's namespaces
std::string port_name(int host);     // the switch's end of host's veth: "h<host>"

void make_switch(const std::string& switch_ns, StateFile& state);
void make_host_network(const std::string& switch_ns, const std::string& host_ns, int host, StateFile& state);

// Whether this kernel has netem (tc says "Specified qdisc kind is unknown" when not).
bool netem_available(const std::string& switch_ns);

// tbf at link.rate on both ends of host's veth; with `netem`, link.delay and link.loss on
// the host's egress (under the tbf): a one-way delay between hosts.
void shape_link(const std::string& switch_ns, const std::string& host_ns, int host, const Link& link, bool netem);

}  // namespace ddl::cluster
