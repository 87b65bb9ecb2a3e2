// Building the emulated network with ip and tc (see network.h). The tbf values follow
// tests/hosts/hosts.sh: the bucket holds at least one 4 ms timer tick at the rate (and
// 64 KiB), and a packet waits at most 50 ms in the queue.
#include <algorithm>

#include <ddl/cluster/command.h>
#include <ddl/cluster/network.h>

namespace ddl::cluster {

std::string host_address(int host) { return "10.99.0." + std::to_string(host + 1); }
std::string port_name(int host) { return "h" + std::to_string(host); }

void make_switch(const std::string& sw, StateFile& state) {
  state.record({"netns", sw});
  run_checked("creating the switch namespace", {"ip", "netns", "add", sw});
  run_checked("the switch's loopback", {"ip", "-n", sw, "link", "set", "lo", "up"});
  run_checked("creating the switch's bridge", {"ip", "-n", sw, "link", "add", "br0", "type", "bridge"});
  run_checked("starting the switch's bridge", {"ip", "-n", sw, "link", "set", "br0", "up"});
}

void make_host_network(const std::string& sw, const std::string& ns, int host, StateFile& state) {
  const std::string name = "host" + std::to_string(host), port = port_name(host);
  state.record({"netns", ns});
  run_checked(name + ": creating its network namespace", {"ip", "netns", "add", ns});
  run_checked(name + ": creating its veth pair",
              {"ip", "-n", sw, "link", "add", port, "type", "veth", "peer", "name", kHostIface, "netns", ns});
  run_checked(name + ": plugging it into the bridge", {"ip", "-n", sw, "link", "set", port, "master", "br0", "up"});
  run_checked(name + ": its loopback", {"ip", "-n", ns, "link", "set", "lo", "up"});
  run_checked(name + ": its address", {"ip", "-n", ns, "addr", "add", host_address(host) + "/24", "dev", kHostIface});
  run_checked(name + ": starting its interface", {"ip", "-n", ns, "link", "set", kHostIface, "up"});
}

bool netem_available(const std::string& sw) {
  CommandResult r = run_command({"tc", "-n", sw, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"});
  if (r.status == 0) {
    run_command({"tc", "-n", sw, "qdisc", "del", "dev", "lo", "root"});
    return true;
  }
  if (r.output.find("unknown") == std::string::npos)
    throw SetupError("checking for netem: `tc qdisc add dev lo root netem delay 1ms` failed: " + r.output);
  return false;
}

void shape_link(const std::string& sw, const std::string& ns, int host, const Link& link, bool netem) {
  const std::string name = "host" + std::to_string(host);
  const long long burst = std::max(65536LL, rate_bits(link.rate) / 8 / 250);
  const std::vector<std::string> tbf = {"handle",  "1:",  "tbf", "rate", link.rate, "burst", std::to_string(burst),
                                        "latency", "50ms"};
  auto qdisc = [&](const std::string& where, const std::string& dev) {
    std::vector<std::string> cmd = {"tc", "-n", where, "qdisc", "replace", "dev", dev, "root"};
    cmd.insert(cmd.end(), tbf.begin(), tbf.end());
    return cmd;
  };
  run_checked(name + ": shaping its link (host side)", qdisc(ns, kHostIface));
  run_checked(name + ": shaping its link (switch side)", qdisc(sw, port_name(host)));
  if (netem && (!link.delay.empty() || !link.loss.empty())) {
    std::vector<std::string> cmd = {"tc",       "-n",     ns,    "qdisc",  "add", "dev",
                                    kHostIface, "parent", "1:1", "handle", "10:", "netem"};
    if (!link.delay.empty()) cmd.insert(cmd.end(), {"delay", link.delay});
    if (!link.loss.empty()) cmd.insert(cmd.end(), {"loss", link.loss});
    run_checked(name + ": delay and loss on its link", cmd);
  }
}

}  // namespace ddl::cluster
