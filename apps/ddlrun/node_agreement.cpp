// The nodes' rendezvous and agreement (see node_agreement.h).
#include "apps/ddlrun/node_agreement.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "apps/common/shell_quote.h"
#include "apps/ddlrun/output_relay.h"
#include <ddl/dist/env.h>
#include <ddl/dist/store/sha256.h>
#include <ddl/dist/store/tcp_store.h>

namespace ddl::launcher {
namespace {

// Records are lines "name=value"; values never hold a newline (the program's is escaped).
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\n' ? std::string("\\n") : c == '\\' ? std::string("\\\\") : std::string(1, c);
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[i + 1] == 'n' ? '\n' : s[i + 1];
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Two command lines, from the word where they first differ (up to 80 characters each).
std::string program_difference(const std::string& there, const std::string& here) {
  size_t at = 0;
  while (at < there.size() && at < here.size() && there[at] == here[at]) ++at;
  while (at > 0 && there[at - 1] != ' ') --at;
  auto part = [&](const std::string& s) {
    const std::string rest = s.substr(at);
    return std::string(at > 0 ? "'..." : "'") + (rest.size() > 80 ? rest.substr(0, 80) + "...'" : rest + "'");
  };
  return "program and arguments " + part(there) + " there, " + part(here) + " on node 0 (sha256 " +
         dist::detail::sha256_hex(there).substr(0, 12) + " vs " + dist::detail::sha256_hex(here).substr(0, 12) + ")";
}

}  // namespace

std::string NodeRecord::encode() const {
  std::ostringstream o;
  o << "ddlrun node v1\nnode_rank=" << node_rank << "\nnnodes=" << nnodes << "\nnproc=" << nproc
    << "\nexpected_world=" << expected_world << "\nhost=" << escape(host) << "\nversion=" << escape(version)
    << "\nargs_may_differ=" << args_may_differ << "\nprogram=" << escape(program) << "\n";
  return o.str();
}

NodeRecord NodeRecord::decode(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "ddlrun node v1")
    throw std::runtime_error(what + " is not a ddlrun node record (another program, or another ddlrun version)");
  NodeRecord r;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = line.substr(0, eq), value = line.substr(eq + 1);
    try {
      if (name == "node_rank") r.node_rank = std::stoi(value);
      if (name == "nnodes") r.nnodes = std::stoi(value);
      if (name == "nproc") r.nproc = std::stoi(value);
      if (name == "expected_world") r.expected_world = std::stoi(value);
      if (name == "args_may_differ") r.args_may_differ = std::stoi(value) != 0;
    } catch (const std::exception&) {
      throw std::runtime_error(what + " holds a bad " + name + ": '" + value + "'");
    }
    if (name == "host") r.host = unescape(value);
    if (name == "version") r.version = unescape(value);
    if (name == "program") r.program = unescape(value);
  }
  return r;
}

Layout layout_of(const std::vector<NodeRecord>& nodes) {
  Layout l;
  for (const NodeRecord& n : nodes) {
    l.first_rank.push_back(l.world);
    l.world += n.nproc;
  }
  return l;
}

std::string disagreement(const std::vector<NodeRecord>& nodes) {
  if (nodes.empty()) return "";
  const NodeRecord& ref = nodes.front();
  const int world = layout_of(nodes).world;
  for (const NodeRecord& n : nodes) {
    std::vector<std::string> diffs;
    if (n.nnodes != ref.nnodes)
      diffs.push_back("--nnodes " + std::to_string(n.nnodes) + " there, " + std::to_string(ref.nnodes) + " on node 0");
    if (n.expected_world != 0 && n.expected_world != world)
      diffs.push_back("its hostfile makes " + std::to_string(n.expected_world) + " ranks, the nodes start " +
                      std::to_string(world));
    if (n.version != ref.version) diffs.push_back("ddl version " + n.version + " there, " + ref.version + " on node 0");
    // With --args-may-differ (per-node output files), only the program itself.
    const bool whole = !n.args_may_differ && !ref.args_may_differ;
    auto program_of = [&](const std::string& p) { return whole ? p : p.substr(0, p.find(' ')); };
    if (program_of(n.program) != program_of(ref.program))
      diffs.push_back(program_difference(program_of(n.program), program_of(ref.program)));
    if (diffs.empty()) continue;
    std::string line =
        "node " + std::to_string(n.node_rank) + " (host " + n.host + ") differs from node 0 (host " + ref.host + "): ";
    for (size_t i = 0; i < diffs.size(); ++i) line += (i ? "; " : "") + diffs[i];
    return line + ". Every node must run the same program with the same arguments and ddl build";
  }
  return "";
}

std::vector<NodeRecord> meet_nodes(dist::Store& store, const std::string& prefix, const NodeRecord& mine,
                                   std::chrono::milliseconds timeout) {
  auto key = [&](int k) { return prefix + "/node" + std::to_string(k); };
  store.set(key(mine.node_rank), mine.encode());
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<NodeRecord> nodes(mine.nnodes);
  for (int k = 0; k < mine.nnodes; ++k) {
    // Polled, so a missing node is named (and another node's refusal seen) without waiting on it alone.
    while (!store.check({key(k)})) {
      if (std::chrono::steady_clock::now() >= deadline) {
        std::string missing;
        for (int j = k; j < mine.nnodes; ++j)
          if (!store.check({key(j)})) missing += (missing.empty() ? "" : ", ") + std::to_string(j);
        throw std::runtime_error("node(s) " + missing + " of " + std::to_string(mine.nnodes) +
                                 " never joined the rendezvous within " + std::to_string(timeout.count() / 1000) +
                                 " s (started? the same --master-addr, --master-port and job token?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    nodes[k] = NodeRecord::decode(store.get(key(k)), "the store's record of node " + std::to_string(k));
    if (nodes[k].node_rank != k)
      throw std::runtime_error("the store's record of node " + std::to_string(k) + " says node " +
                               std::to_string(nodes[k].node_rank));
  }
  // Node 0's process serves the store: it waits until every node has read every record, or a
  // short job could end there and close the store while another node still reads.
  store.set(prefix + "/read" + std::to_string(mine.node_rank), "1");
  for (int k = 1; mine.node_rank == 0 && k < mine.nnodes; ++k)
    while (!store.check({prefix + "/read" + std::to_string(k)})) {
      if (std::chrono::steady_clock::now() >= deadline)
        throw std::runtime_error("node " + std::to_string(k) +
                                 " joined the rendezvous but did not finish reading it "
                                 "within " +
                                 std::to_string(timeout.count() / 1000) + " s");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  if (std::string why = disagreement(nodes); !why.empty()) throw std::runtime_error(why);
  return nodes;
}

int join_nodes(Config& cfg, int port, const std::string& token, dist::TCPStoreServer* server) {
  if (cfg.nnodes <= 1 || !cfg.launcher_store) return 0;
  NodeRecord mine;
  mine.node_rank = cfg.node_rank;
  mine.nnodes = cfg.nnodes;
  mine.nproc = cfg.nproc;
  mine.expected_world = cfg.expected_world;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  mine.host = host;
  for (size_t i = 0; i < cfg.command.size(); ++i) mine.program += (i ? " " : "") + apps::shell_quote(cfg.command[i]);
  mine.version = DDL_VERSION;
  mine.args_may_differ = cfg.args_may_differ;
  double seconds = cfg.timeout_seconds;
  if (seconds <= 0)
    if (const char* t = std::getenv("DDL_TIMEOUT"); t && *t) seconds = std::atof(t);
  if (seconds <= 0) seconds = 300;
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
  std::vector<NodeRecord> nodes;
  std::string why;
  int status = 0;
  try {
    dist::TCPStoreOptions so;
    so.timeout = timeout;
    so.token = token;
    const dist::JobToken given = dist::read_job_token();
    so.token_source = given.value.empty() ? "made by node 0's ddlrun" : given.source;
    so.who = "ddlrun node " + std::to_string(cfg.node_rank) + " on host " + mine.host;
    dist::TCPStore store(cfg.master_addr, port, so);
    nodes = meet_nodes(store, "ddlrun/nodes", mine, timeout);
  } catch (const std::exception& e) {
    why = e.what();
    status = why.find(" differs from node 0 ") != std::string::npos ? 2 : 1;
  }
  if (status != 0) {
    // One write: the nodes of a job often share a terminal or log, and fail at the same moment.
    std::cerr << ("ddlrun: node " + std::to_string(cfg.node_rank) + " of " + std::to_string(cfg.nnodes) + " (host " +
                  mine.host + "): the nodes' rendezvous " + (status == 2 ? "refused the job: " : "failed: ") + why +
                  "\n");
    if (server) server->linger(std::chrono::seconds(5));  // until the other nodes have read it
    return status;
  }
  const Layout l = layout_of(nodes);
  cfg.first_rank_of_node = l.first_rank[cfg.node_rank];
  cfg.world_size = l.world;
  *cfg.met_first_rank = cfg.first_rank_of_node;
  if (!cfg.log_dir.empty() && cfg.logs.empty()) {
    std::vector<int> ranks;
    for (int i = 0; i < cfg.nproc; ++i) ranks.push_back(cfg.first_rank() + i);
    try {
      cfg.logs = open_rank_logs(cfg.log_dir, ranks);
    } catch (const std::exception& e) {
      std::cerr << "ddlrun: " << e.what() << "\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace ddl::launcher
