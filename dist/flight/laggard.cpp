// The position exchange after a timeout, and the judgement on it (see laggard.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <sstream>
#include <thread>

#include <ddl/dist/flight/laggard.h>

namespace ddl::dist::flight {
namespace {

std::string host_key(int r) { return "flight/host/" + std::to_string(r); }
std::string position_key(int r) { return "flight/position/" + std::to_string(r); }

std::string on_host(const Position& p) {
  return "rank " + std::to_string(p.rank) + (p.host.empty() ? "" : " on host " + p.host);
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ",") + std::to_string(r);
  return (ranks.size() == 1 ? "rank " : "ranks ") + s;
}

std::string seconds(Millis m) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", m.count() / 1000.0);
  return b;
}

Position parse(int rank, const std::string& v) {
  Position p;
  p.rank = rank;
  std::istringstream in(v);
  if (in >> p.last_completed >> p.at_seq >> p.host) {
    in.get();
    std::getline(in, p.op);
    p.reported = true;
  }
  return p;
}

// "<last completed> <seq> <host>\n<op>": what a rank publishes under position_key.
std::string position_value(const GroupRecorder& rec, uint64_t seq, const std::string& op) {
  std::string host = host_name().empty() ? "?" : host_name();
  for (char& c : host)
    if (c == ' ') c = '_';
  return std::to_string(rec.last_completed()) + " " + std::to_string(seq) + " " + host + "\n" + op;
}

}  // namespace

void publish_host(GroupRecorder& rec) {
  try {
    rec.store()->set(host_key(rec.rank()), host_name());
  } catch (const std::exception&) {
    // Messages then name the rank alone.
  }
}

Laggard judge(const Position& me, const std::vector<Position>& others, uint64_t seq, Millis waited) {
  Laggard l;
  std::vector<int> same_op{me.rank}, other_op, silent, arrived{me.rank};
  const Position* behind = nullptr;
  for (const Position& p : others) {
    if (!p.reported) {
      silent.push_back(p.rank);
      continue;
    }
    arrived.push_back(p.rank);
    if (p.at_seq == seq && p.op == me.op) same_op.push_back(p.rank);
    if (p.at_seq == seq && p.op != me.op) other_op.push_back(p.rank);
    if (p.at_seq < seq && (!behind || p.at_seq < behind->at_seq)) behind = &p;
  }
  auto find = [&](int r) -> const Position& {
    for (const Position& p : others)
      if (p.rank == r) return p;
    return me;
  };
  std::sort(arrived.begin(), arrived.end());
  std::sort(same_op.begin(), same_op.end());
  const std::string at = me.op + " #" + std::to_string(seq);
  if (!other_op.empty()) {
    l.desync = true;
    // The odd one out is blamed; on a tie, the rank that is not this one.
    const bool me_odd = same_op.size() < other_op.size();
    const Position& odd = me_odd ? me : find(other_op.front());
    l.rank = odd.rank;
    l.message = "desync at collective #" + std::to_string(seq) + ": " + on_host(odd) + " called " + odd.op + " while " +
                rank_list(me_odd ? other_op : same_op) + " called " + (me_odd ? find(other_op[0]).op : me.op);
    return l;
  }
  if (behind) {
    l.rank = behind->rank;
    l.message = on_host(*behind) + " never arrived at " + at + ": it is still in " + behind->op + " #" +
                std::to_string(behind->at_seq) + " (its last completed collective is #" +
                std::to_string(behind->last_completed) + ")";
    return l;
  }
  if (!silent.empty()) {
    l.rank = silent.front();
    const Position& p = find(l.rank);
    l.message = at + ": " + on_host(p) + " never arrived (" + rank_list(arrived) + " waited " + seconds(waited) +
                "; it did not report its position: frozen, dead, cut off, or busy before #" + std::to_string(seq) + ")";
    if (silent.size() > 1) l.message += "; also silent: " + rank_list({silent.begin() + 1, silent.end()});
    return l;
  }
  l.message = at + ": every rank arrived (" + rank_list(arrived) +
              "); none stands out, so the fault is between them (a link, the transport)";
  return l;
}

void publish_position(GroupRecorder& rec, uint64_t seq, const std::string& op) {
  std::thread([store = rec.store(), key = position_key(rec.rank()), value = position_value(rec, seq, op)] {
    try {
      store->set(key, value);
    } catch (const std::exception&) {
    }
  }).detach();
}

Laggard find_laggard(GroupRecorder& rec, uint64_t seq, const std::string& op, Millis waited, Millis wait) {
  Position me;
  me.rank = rec.rank();
  me.reported = true;
  me.last_completed = rec.last_completed();
  me.at_seq = seq;
  me.op = op;
  me.host = host_name();
  const int size = rec.size();
  // On a thread of its own: a store behind a cut link blocks until its own timeout, and this
  // rank must fail within its timeout, not the store's.
  auto store = rec.store();
  auto result = std::make_shared<std::promise<std::vector<Position>>>();
  std::future<std::vector<Position>> got = result->get_future();
  const std::string value = position_value(rec, seq, op);
  std::thread([store, me, size, wait, result, value] {
    std::vector<Position> others;
    try {
      store->set(position_key(me.rank), value);
      const auto deadline = std::chrono::steady_clock::now() + wait;
      std::vector<bool> seen(size, false);
      seen[me.rank] = true;
      for (int left = size - 1; left > 0 && std::chrono::steady_clock::now() < deadline;) {
        for (int r = 0; r < size; ++r)
          if (!seen[r] && store->check({position_key(r)})) {
            seen[r] = true;
            --left;
          }
        if (left > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      for (int r = 0; r < size; ++r) {
        if (r == me.rank) continue;
        Position p = seen[r] ? parse(r, store->get(position_key(r), Millis(1000))) : Position{};
        p.rank = r;
        if (p.host.empty() && store->check({host_key(r)})) p.host = store->get(host_key(r), Millis(1000));
        others.push_back(p);
      }
      result->set_value(std::move(others));
    } catch (...) {
      result->set_exception(std::current_exception());
    }
  }).detach();
  Laggard l;
  if (got.wait_for(wait + Millis(1000)) != std::future_status::ready) {
    l.message = op + " #" + std::to_string(seq) + ": the store did not answer within " + seconds(wait) +
                ": this rank may be the one cut off";
  } else {
    try {
      l = judge(me, got.get(), seq, waited);
    } catch (const std::exception& e) {
      l.message = op + " #" + std::to_string(seq) + ": the store failed (" + e.what() + "): this rank may be cut off";
    }
  }
  rec.set_suspect(l.rank, l.message);
  return l;
}

}  // namespace ddl::dist::flight
