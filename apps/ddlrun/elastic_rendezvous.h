// ddlrun's elastic rendezvous (ddlrun --nnodes MIN:MAX, docs/dist.md "Elastic jobs"): the
// rounds in which agents agree on who takes part, kept in a store that every agent serves
// and that fails over to the next surviving agent (Note [Elastic store failover]). It does
// not start workers: elastic_agent.cpp does, once per round.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <ddl/dist/store/tcp_store.h>

namespace ddl::launcher::elastic {

struct RendezvousConfig {
  int min_nodes = 1, max_nodes = 1;
  int node_id = 0;                      // this node's stable id; node i serves candidates[i]
  std::vector<std::string> candidates;  // the store's hosts, in the order they take over
  int port = 0;                         // every candidate's store port
  std::string token;                    // the job token every store checks
  double last_call_s = 2.0;             // once MIN have joined, a round closes this long after the last join
  double join_timeout_s = 600;          // a node not admitted within this gives up
  double probe_timeout_s = 1.0;         // connecting to one candidate
};

// One closed round: who takes part, in rank order.
struct Round {
  int number = -1;
  std::vector<int> nodes;  // node ids, ascending: position = node rank
  int position = -1;       // this node's
  std::string store_host;  // the store that held the round (the workers' MASTER_ADDR)
  bool job_done = false;   // no round: another node's workers finished the job
};

class Rendezvous {
 public:
  explicit Rendezvous(RendezvousConfig cfg);
  // Joins the next round and waits until it closes with this node admitted. Survives the
  // store's host dying (fails over and joins there). Throws when join_timeout_s passes.
  Round next_round();
  // Polled while round r's workers run (rate-limited to every 0.5 s): true when the store
  // was lost, when a node of r joins a later round (its workers failed), or when a new node
  // waits and r has fewer than max_nodes (torchrun's num_nodes_waiting).
  bool membership_changed(const Round& r);
  // True when some node has joined round r + 1 already (no rate limit; false when the store
  // cannot be read): a failure of r's workers then followed another node's restart.
  bool next_round_open(const Round& r);
  // The job finished on this node: waiting nodes stop waiting.
  void mark_done();
  // Closes this agent's connection to the store (a lingering server waits for its clients).
  void disconnect() { store_.reset(); }
  const std::string& why() const { return why_; }  // what the last true membership_changed saw

 private:
  dist::TCPStore& store();
  void find_store();
  std::unique_ptr<dist::TCPStore> connect(const std::string& host, double timeout_s) const;
  Round join(int number);
  // True when one of the `joined` first joiners of round `number` took part in the round
  // before it, or this store has no record of that round (Note [Elastic rounds]).
  bool follows_previous(dist::TCPStore& s, int number, int64_t joined);

  RendezvousConfig cfg_;
  std::unique_ptr<dist::TCPStore> store_;
  std::string store_host_;
  int64_t term_ = 0;     // the failover generation of the store last used
  int last_round_ = -1;  // the last round this node took part in
  std::chrono::steady_clock::time_point next_poll_{};
  std::string why_;
};

// "MIN:MAX" or "N" (MIN = MAX); throws std::invalid_argument naming the problem.
std::pair<int, int> parse_nnodes(const std::string& text);

}  // namespace ddl::launcher::elastic
