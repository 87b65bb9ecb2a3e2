// The elastic rendezvous (see elastic_rendezvous.h).
//
// Note [Elastic store failover]
// torchrun's c10d rendezvous keeps its state in one TCPStore, on the node that hosts it: lose
// that node and the job is lost. Here every agent serves a store from its start (candidate i
// on node i's address, the same port everywhere), and the rendezvous state lives in one of
// them, the leader, marked by a key "rdzv/term" (its failover generation):
//   - an agent looking for the store probes every candidate and uses the reachable one with
//     the highest term (ties: the lowest index);
//   - when none has a term (the job starts, or the leader's node is gone with the state),
//     the lowest reachable candidate becomes leader: its own agent writes term + 1 and the
//     last round it knew, once it has seen no lower candidate twice, 1 s apart (an agent
//     starting at the same moment has its store up by then); the others wait for the term;
//   - a round's workers use the leader's store too (MASTER_ADDR), under the round's keys.
// Only the small rendezvous state is lost with a leader, and the survivors re-create it:
// round numbers go on from the last round they ran. Limits: a network partition (rather than
// a dead node) can leave two leaders, each side forming its own rounds if it has MIN nodes;
// and nodes must be candidates (have an address in the list) to take the store over.
//
// Note [Elastic rounds]
// Round R's keys: "rdzv/R/joined" (an add counter: a node's join index), "rdzv/R/node/<i>"
// (the id of the i-th to join), "rdzv/R/closed" (how many of the first joiners take part),
// "rdzv/last" (the last closed round). A node joins rdzv/last + 1. The round closes as soon
// as MAX have joined, or once MIN have and no one joined for last_call_s, but only once a
// node of round R - 1 has joined it (when this store holds R - 1): nodes that wait while R - 1
// runs never form a job of their own beside it (torchrun's wait list); one node wins the
// "rdzv/R/closer" add and writes "closed" from the counter it reads after winning, so a node
// whose index is below "closed" is in, and one above joins R + 1: it is waiting. Nodes of a
// running round R restart (stop their workers, join R + 1) when R + 1 has a joiner that
// was in R (it failed) or, below MAX, any joiner (torchrun's num_nodes_waiting).
#include "apps/ddlrun/elastic_rendezvous.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include <ddl/dist/store/socket.h>

namespace ddl::launcher::elastic {

namespace {
using Clock = std::chrono::steady_clock;
using dist::Millis;

Millis ms(double s) { return Millis(static_cast<int64_t>(s * 1000)); }
Round done_round() {
  Round r;
  r.job_done = true;
  return r;
}
std::string key(int round, const std::string& name) { return "rdzv/" + std::to_string(round) + "/" + name; }
}  // namespace

std::pair<int, int> parse_nnodes(const std::string& text) {
  const size_t colon = text.find(':');
  auto number = [&](const std::string& s) {
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(s, &used);
    } catch (const std::exception&) {
      used = std::string::npos;
    }
    if (used != s.size() || v < 1 || v > 65536)
      throw std::invalid_argument("--nnodes " + text + ": expected N or MIN:MAX, whole numbers in [1, 65536]");
    return v;
  };
  if (colon == std::string::npos) return {number(text), number(text)};
  const int lo = number(text.substr(0, colon)), hi = number(text.substr(colon + 1));
  if (lo > hi) throw std::invalid_argument("--nnodes " + text + ": MIN is above MAX");
  return {lo, hi};
}

Rendezvous::Rendezvous(RendezvousConfig cfg) : cfg_(std::move(cfg)) {}

std::unique_ptr<dist::TCPStore> Rendezvous::connect(const std::string& host, double timeout_s) const {
  dist::TCPStoreOptions o;
  o.timeout = ms(timeout_s);
  o.token = cfg_.token;
  o.token_source = "ddlrun";
  return std::make_unique<dist::TCPStore>(host, cfg_.port, o);
}

void Rendezvous::find_store() {
  store_.reset();
  const Clock::time_point give_up = Clock::now() + ms(cfg_.join_timeout_s);
  int lowest_seen_as_self = 0;  // probes in a row that found no lower candidate than this node
  while (Clock::now() < give_up) {
    int best = -1, lowest = -1;
    int64_t best_term = 0;
    std::vector<std::unique_ptr<dist::TCPStore>> open(cfg_.candidates.size());
    for (size_t i = 0; i < cfg_.candidates.size(); ++i) {
      try {
        // One connect try first (100 ms): a dead candidate refuses at once, and the store
        // client would retry it for the whole probe timeout.
        ::close(dist::detail::tcp_connect(cfg_.candidates[i], cfg_.port, Clock::now()));
        open[i] = connect(cfg_.candidates[i], cfg_.probe_timeout_s);
        if (lowest < 0) lowest = static_cast<int>(i);
        if (open[i]->check({"rdzv/term"})) {
          const int64_t t = std::stoll(open[i]->get("rdzv/term", ms(cfg_.probe_timeout_s)));
          if (t > best_term) best_term = t, best = static_cast<int>(i);
        }
      } catch (const std::exception&) {
        open[i].reset();  // down (refused, or no answer within the probe timeout)
      }
    }
    if (best >= 0) {
      if (term_ > 0 && best_term > term_)
        std::fprintf(stderr, "ddlrun: elastic: node %d: the store failed over from %s to %s (term %lld)\n",
                     cfg_.node_id, store_host_.c_str(), cfg_.candidates[best].c_str(),
                     static_cast<long long>(best_term));
      store_ = std::move(open[best]);
      store_host_ = cfg_.candidates[best];
      term_ = best_term;
      return;
    }
    lowest_seen_as_self = lowest == cfg_.node_id ? lowest_seen_as_self + 1 : 0;
    if (lowest_seen_as_self >= 2) {  // See Note [Elastic store failover]
      dist::TCPStore& s = *open[lowest];
      if (s.add("rdzv/init", 1) == 1) {
        s.set("rdzv/last", std::to_string(last_round_));
        s.set("rdzv/term", std::to_string(term_ + 1));
        if (term_ > 0)
          std::fprintf(stderr, "ddlrun: elastic: node %d: the store failed over from %s to %s (term %lld)\n",
                       cfg_.node_id, store_host_.c_str(), cfg_.candidates[lowest].c_str(),
                       static_cast<long long>(term_ + 1));
        store_ = std::move(open[lowest]);
        store_host_ = cfg_.candidates[lowest];
        ++term_;
        return;
      }
      continue;  // another agent of this node's id? The next probe finds its term
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(lowest == cfg_.node_id ? 1000 : 300));
  }
  throw std::runtime_error("elastic rendezvous: no store among the candidates answered with the job's state within " +
                           std::to_string(static_cast<int>(cfg_.join_timeout_s)) + " s");
}

dist::TCPStore& Rendezvous::store() {
  if (!store_) find_store();
  return *store_;
}

Round Rendezvous::next_round() {
  const Clock::time_point give_up = Clock::now() + ms(cfg_.join_timeout_s);
  while (true) {
    try {
      dist::TCPStore& s = store();
      if (s.check({"rdzv/done"})) return done_round();
      const int last = std::stoi(s.get("rdzv/last", ms(5)));
      Round r = join(std::max(last, last_round_) + 1);
      if (r.job_done) return r;
      last_round_ = r.number;
      return r;
    } catch (const std::exception& e) {
      // The store's host is gone (or stalled): find the next one and join there.
      if (Clock::now() > give_up) throw;
      std::fprintf(stderr, "ddlrun: elastic: the store at %s failed (%s); looking for the next one\n",
                   store_host_.c_str(), e.what());
      store_.reset();
    }
  }
}

Round Rendezvous::join(int number) {
  dist::TCPStore& s = *store_;
  const Clock::time_point give_up = Clock::now() + ms(cfg_.join_timeout_s);
  while (true) {  // See Note [Elastic rounds]
    const int64_t index = s.add(key(number, "joined"), 1) - 1;
    s.set(key(number, "node/" + std::to_string(index)), std::to_string(cfg_.node_id));
    int64_t seen = index + 1;
    Clock::time_point last_join = Clock::now();
    while (!s.check({key(number, "closed")})) {
      if (s.check({"rdzv/done"})) return done_round();
      if (Clock::now() > give_up)
        throw std::runtime_error("elastic rendezvous: round " + std::to_string(number) + " did not close within " +
                                 std::to_string(static_cast<int>(cfg_.join_timeout_s)) + " s (" + std::to_string(seen) +
                                 " of at least " + std::to_string(cfg_.min_nodes) + " nodes joined)");
      const int64_t now_joined = s.add(key(number, "joined"), 0);
      if (now_joined != seen) seen = now_joined, last_join = Clock::now();
      const bool full = seen >= cfg_.max_nodes;
      const bool quiet = seen >= cfg_.min_nodes && Clock::now() - last_join >= ms(cfg_.last_call_s);
      if ((full || quiet) && follows_previous(s, number, seen) && s.add(key(number, "closer"), 1) == 1) {
        const int64_t n = std::min<int64_t>(s.add(key(number, "joined"), 0), cfg_.max_nodes);
        s.set(key(number, "closed"), std::to_string(n));
        s.set("rdzv/last", std::to_string(number));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const int64_t closed = std::stoll(s.get(key(number, "closed"), ms(5)));
    if (index >= closed) {  // too late for this round: wait in the next one
      ++number;
      continue;
    }
    Round r;
    r.number = number;
    r.store_host = store_host_;
    for (int64_t i = 0; i < closed; ++i)
      r.nodes.push_back(std::stoi(s.get(key(number, "node/" + std::to_string(i)), ms(10))));
    std::sort(r.nodes.begin(), r.nodes.end());
    r.position = static_cast<int>(std::find(r.nodes.begin(), r.nodes.end(), cfg_.node_id) - r.nodes.begin());
    return r;
  }
}

bool Rendezvous::follows_previous(dist::TCPStore& s, int number, int64_t joined) {
  if (number == 0 || !s.check({key(number - 1, "closed")})) return true;  // no record of it here
  const int64_t closed = std::stoll(s.get(key(number - 1, "closed"), ms(5)));
  std::vector<int> before;
  for (int64_t i = 0; i < closed; ++i)
    before.push_back(std::stoi(s.get(key(number - 1, "node/" + std::to_string(i)), ms(5))));
  for (int64_t i = 0; i < joined; ++i) {
    const int id = std::stoi(s.get(key(number, "node/" + std::to_string(i)), ms(5)));
    if (std::find(before.begin(), before.end(), id) != before.end()) return true;
  }
  return false;
}

bool Rendezvous::membership_changed(const Round& r) {
  if (Clock::now() < next_poll_) return false;
  next_poll_ = Clock::now() + std::chrono::milliseconds(500);
  if (!store_) return true;
  try {
    dist::TCPStore& s = *store_;
    const int next = r.number + 1;
    const int64_t waiting = s.add(key(next, "joined"), 0);
    for (int64_t i = 0; i < waiting; ++i) {
      const int id = std::stoi(s.get(key(next, "node/" + std::to_string(i)), ms(2)));
      const bool member = std::find(r.nodes.begin(), r.nodes.end(), id) != r.nodes.end();
      if (member || static_cast<int>(r.nodes.size()) < cfg_.max_nodes) {
        why_ = "node " + std::to_string(id) + (member ? " of this round left it" : " waits to join") + " (round " +
               std::to_string(next) + ")";
        return true;
      }
    }
    return false;
  } catch (const std::exception& e) {
    why_ = std::string("the store at ") + store_host_ + " is lost (" + e.what() + ")";
    store_.reset();
    return true;
  }
}

bool Rendezvous::next_round_open(const Round& r) {
  if (!store_) return false;
  try {
    return store_->add(key(r.number + 1, "joined"), 0) > 0;
  } catch (const std::exception&) {
    store_.reset();
    return false;
  }
}

void Rendezvous::mark_done() {
  try {
    store().set("rdzv/done", "1");
  } catch (const std::exception&) {
    // Best effort: a waiting node then gives up at its join timeout.
  }
}

}  // namespace ddl::launcher::elastic
