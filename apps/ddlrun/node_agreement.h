// The rendezvous of ddlrun's nodes (--nnodes > 1): before any worker starts, each node's
// launcher sets a record of itself in node 0's store (its host, its worker count, the
// program and arguments it runs, the ddl version) and reads every other node's. From them
// come the ranks: node k's first rank is the sum of the worker counts of nodes 0..k-1, so
// nodes may run different numbers of workers (2 + 1). Nodes must agree on the rest: a node
// that differs from node 0 is refused, on every node, naming it, its host and what differs.
// Kept apart from the launcher so a membership change (elastic) can call it again.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "apps/ddlrun/launcher.h"
#include <ddl/dist/store/store.h>

namespace ddl::dist {
class TCPStoreServer;
}

namespace ddl::launcher {

struct NodeRecord {
  int node_rank = 0;
  int nnodes = 1;
  int nproc = 1;                 // workers on this node
  int expected_world = 0;        // the world a hostfile announces (sum of its slots); 0: none given
  std::string host;              // gethostname(), or the emulated host's name
  std::string program;           // the program and its arguments, shell-quoted
  bool args_may_differ = false;  // --args-may-differ: compare the program, not its arguments
  std::string version;           // ddl's version (meson's project version)
  std::string encode() const;
  // Throws std::runtime_error naming `what` when `text` is not a record.
  static NodeRecord decode(const std::string& text, const std::string& what);
};

// Where each node's ranks start, from every node's record (in node order).
struct Layout {
  int world = 0;
  std::vector<int> first_rank;  // first_rank[k]: node k's rank 0
};
Layout layout_of(const std::vector<NodeRecord>& nodes);

// "" when every record agrees with node 0's; else one line naming the first node that
// differs, its host, and each difference ("program arguments: '...' here, '...' on node 0").
std::string disagreement(const std::vector<NodeRecord>& nodes);

// Sets `mine` under `prefix` in the store, waits for the other nodes' records until
// `timeout` (naming the nodes still missing), and returns all of them in node order.
// Throws std::runtime_error with disagreement()'s line when a node differs.
std::vector<NodeRecord> meet_nodes(dist::Store& store, const std::string& prefix, const NodeRecord& mine,
                                   std::chrono::milliseconds timeout);

// ddlrun's part: with --nnodes > 1 and the launcher's store, connects to node 0's store at
// `port` with `token`, meets the other nodes and sets cfg's first rank and world size (and
// opens the --log-dir files, whose names are ranks). Returns 0, or ddlrun's exit status
// after printing why: 2 when a node differs, 1 when the nodes never all met. Node 0 keeps
// its store up for a few seconds after a refusal, so the other nodes read why too.
int join_nodes(Config& cfg, int port, const std::string& token, dist::TCPStoreServer* server);

}  // namespace ddl::launcher
