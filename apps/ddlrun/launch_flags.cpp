// Hostfiles, host lists and other launchers' flags (see launch_flags.h).
#include "apps/ddlrun/launch_flags.h"

#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ddl::launcher {
namespace {

int parse_slots(const std::string& text, const std::string& where) {
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || n < 1 || n > 4096)
    throw std::runtime_error(where + ": slots '" + text + "' is not a count in [1, 4096]");
  return n;
}

// This machine's names and addresses, to find its line.
std::set<std::string> own_names() {
  std::set<std::string> names{"localhost"};
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) == 0) {
    names.insert(host);
    const std::string h = host;
    names.insert(h.substr(0, h.find('.')));
  }
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) == 0) {
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
      if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) continue;
      char text[NI_MAXHOST];
      const socklen_t len = i->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      if (getnameinfo(i->ifa_addr, len, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0) names.insert(text);
    }
    freeifaddrs(ifs);
  }
  return names;
}

}  // namespace

std::vector<HostSlots> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("--hostfile " + path + ": cannot read it");
  std::vector<HostSlots> hosts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    const std::string where = "--hostfile " + path + " line " + std::to_string(number);
    HostSlots h{word, 1};
    while (words >> word) {
      if (word.rfind("slots=", 0) == 0)
        h.slots = parse_slots(word.substr(6), where);
      else if (word.rfind("max_slots=", 0) != 0 && word.rfind("max-slots=", 0) != 0)
        throw std::runtime_error(where + ": '" + word + "' is not slots=N (the format is 'host slots=N')");
    }
    hosts.push_back(h);
  }
  if (hosts.empty()) throw std::runtime_error("--hostfile " + path + " names no host");
  return hosts;
}

std::vector<HostSlots> parse_host_list(const std::string& list) {
  std::vector<HostSlots> hosts;
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw std::runtime_error("-H " + list + ": an empty host between commas");
    const size_t colon = item.rfind(':');
    // host:slots; a bare IPv6 address has several colons and no slots.
    if (colon == std::string::npos || item.find(':') != colon)
      hosts.push_back({item, 1});
    else
      hosts.push_back({item.substr(0, colon), parse_slots(item.substr(colon + 1), "-H " + list)});
  }
  if (hosts.empty()) throw std::runtime_error("-H: give host:slots[,host:slots...]");
  return hosts;
}

int apply_hosts(Config& cfg, const std::vector<HostSlots>& hosts, const std::string& flag, bool node_rank_given,
                bool master_addr_given, bool nproc_given) {
  if (nproc_given) {
    std::cerr << "ddlrun: " << flag << " gives each node's worker count: drop --nproc\n";
    return 2;
  }
  if (cfg.nnodes != 1 && cfg.nnodes != static_cast<int>(hosts.size())) {
    std::cerr << "ddlrun: --nnodes " << cfg.nnodes << " but " << flag << " lists " << hosts.size() << " nodes\n";
    return 2;
  }
  cfg.nnodes = static_cast<int>(hosts.size());
  if (!node_rank_given) {
    const std::set<std::string> mine = own_names();
    std::vector<int> matches;
    for (size_t i = 0; i < hosts.size(); ++i)
      if (mine.count(hosts[i].host)) matches.push_back(static_cast<int>(i));
    if (hosts.size() > 1 && matches.size() != 1) {
      std::cerr << "ddlrun: " << flag << ": "
                << (matches.empty() ? "this machine is none of its hosts"
                                    : "this machine is " + std::to_string(matches.size()) + " of its hosts")
                << "; give --node-rank (this node's line, from 0)\n";
      return 2;
    }
    cfg.node_rank = matches.empty() ? 0 : matches.front();
  }
  if (cfg.node_rank < 0 || cfg.node_rank >= cfg.nnodes) {
    std::cerr << "ddlrun: --node-rank " << cfg.node_rank << " is outside the " << cfg.nnodes << " nodes of " << flag
              << "\n";
    return 2;
  }
  cfg.nproc = hosts[cfg.node_rank].slots;
  cfg.expected_world = 0;
  for (const HostSlots& h : hosts) cfg.expected_world += h.slots;
  if (!master_addr_given) cfg.master_addr = hosts.front().host;
  return 0;
}

int apply_emulated_hosts(Config& cfg, int hosts, const std::string& hostfile, const std::string& host_list) {
  const std::string flag = hostfile.empty() ? "-H" : "--hostfile";
  const std::vector<HostSlots> list = hostfile.empty() ? parse_host_list(host_list) : read_hostfile(hostfile);
  if (static_cast<int>(list.size()) != hosts) {
    std::cerr << "ddlrun: --hosts " << hosts << " but " << flag << " lists " << list.size() << " hosts\n";
    return 2;
  }
  for (int h = 0; h < hosts; ++h) {
    if (list[h].host != "host" + std::to_string(h)) {
      std::cerr << "ddlrun: with --hosts, " << flag << " names the emulated hosts in order (host0:N,host1:N,...); "
                << "entry " << h + 1 << " is '" << list[h].host << "'\n";
      return 2;
    }
    if (list[h].slots > 64) {
      std::cerr << "ddlrun: " << flag << ": host" << h << " has " << list[h].slots
                << " slots; an emulated host runs at most 64 ranks\n";
      return 2;
    }
    cfg.host_slots.push_back(list[h].slots);
  }
  return 0;
}

int apply_host_flags(Config& cfg, int hosts, int& nproc_per_host, const std::string& hostfile,
                     const std::string& host_list, bool node_rank_given, bool master_addr_given, bool nproc_given) {
  if (hostfile.empty() && host_list.empty()) return 0;
  if (!hostfile.empty() && !host_list.empty()) {
    std::cerr << "ddlrun: give --hostfile or -H, not both\n";
    return 2;
  }
  try {
    if (hosts > 0) {       // emulated hosts of different sizes: host0:2,host1:1
      nproc_per_host = 1;  // each host's count is in cfg.host_slots
      return apply_emulated_hosts(cfg, hosts, hostfile, host_list);
    }
    const auto list = hostfile.empty() ? parse_host_list(host_list) : read_hostfile(hostfile);
    return apply_hosts(cfg, list, hostfile.empty() ? "-H" : "--hostfile", node_rank_given, master_addr_given,
                       nproc_given);
  } catch (const std::exception& e) {
    std::cerr << "ddlrun: " << e.what() << "\n";
    return 2;
  }
}

int refuse_unknown_flag(const std::vector<std::string>& command) {
  if (command.empty() || command.front().size() < 2 || command.front()[0] != '-') return 0;
  const std::string flag = command.front().substr(0, command.front().find('='));
  // torchrun's and mpirun's spellings with a ddlrun counterpart of another meaning or form.
  static const std::map<std::string, std::string> instead = {
      {"--standalone", "--nproc N (one node needs no rendezvous flags)"},
      {"--rdzv_backend", "--master-addr and --master-port (node 0's launcher serves the store)"},
      {"--rdzv-backend", "--master-addr and --master-port (node 0's launcher serves the store)"},
      {"--rdzv_endpoint", "--master-addr HOST --master-port PORT"},
      {"--rdzv-endpoint", "--master-addr HOST --master-port PORT"},
      {"--rdzv_id", "nothing (each ddlrun job has its own store and token)"},
      {"--no_python", "nothing (ddlrun runs the program as given)"},
      {"--no-python", "nothing (ddlrun runs the program as given)"},
      {"-np", "--nproc N"},
      {"-n", "--nproc N"},
      {"--host", "-H host:slots,..."},
  };
  std::cerr << "ddlrun: unknown flag " << flag << " before the program";
  if (auto it = instead.find(flag); it != instead.end()) std::cerr << "; ddlrun's way: " << it->second;
  std::cerr << " (ddlrun --help lists its flags; everything from the program on is the program's)\n";
  return 2;
}

}  // namespace ddl::launcher
