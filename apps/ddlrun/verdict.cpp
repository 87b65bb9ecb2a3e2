// The verdict on a failed job from the ranks' flight-recorder dumps (see verdict.h).
#include "apps/ddlrun/verdict.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace ddl::launcher {
namespace {

// Where a rank stood in its first group (the default group): the first collective it had
// started and not completed, else the one after its last completed.
struct Position {
  bool known = false;
  int group = -1;
  int64_t last_completed = 0;
  uint64_t at = 0;
  std::string desc;  // "" when it was between collectives
  std::string state;
  int64_t start_ns = 0;
  bool rendezvous_failed = false;
  bool any_collective = false;
};

Position position_of(const RankDump& d) {
  Position p;
  p.known = true;
  for (const DumpGroup& g : d.groups)
    if (p.group < 0 || g.id < p.group) {
      p.group = g.id;
      p.last_completed = g.last_completed;
    }
  p.at = uint64_t(p.last_completed) + 1;
  bool found = false;
  for (const DumpEntry& e : d.entries) {
    if (e.op == "rendezvous") {
      p.rendezvous_failed |= e.state == "failed";
      continue;
    }
    if (e.p2p || e.group != p.group) continue;
    p.any_collective = true;
    if (!found && e.state != "completed" && int64_t(e.seq) > p.last_completed) {
      found = true;
      p.at = e.seq;
      p.desc = e.desc;
      p.state = e.state;
      p.start_ns = e.start_ns;
    }
  }
  return p;
}

std::string rank_host(const RankFacts& f) { return "rank " + std::to_string(f.rank) + " (" + f.host + ")"; }

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ",") + std::to_string(r);
  return (ranks.size() == 1 ? "rank " : "ranks ") + s;
}

std::string op_name(const std::string& desc) { return desc.substr(0, desc.find('(')); }

std::string clock_of(int64_t ns) {
  if (ns <= 0) return "?";
  const std::time_t s = ns / 1000000000;
  std::tm utc{};
  gmtime_r(&s, &utc);
  char b[32];
  std::strftime(b, sizeof b, "%H:%M:%S", &utc);
  return std::string(b) + "." + std::to_string(1000 + (ns / 1000000) % 1000).substr(1);
}

// One line per rank: where it stood and what it said.
std::string rank_line(const RankFacts& f, const Position& p) {
  std::string s = "  " + rank_host(f) + ": ";
  if (!f.dump) {
    s += "no dump";
  } else if (p.rendezvous_failed && !p.any_collective) {
    s += "failed in the rendezvous";
  } else if (!p.desc.empty()) {
    s += "in " + op_name(p.desc) + " #" + std::to_string(p.at) + " (" + p.desc + ", " + p.state + ", since " +
         clock_of(p.start_ns) + " UTC)";
  } else {
    s += "between collectives, after #" + std::to_string(p.last_completed);
  }
  if (f.stopped) s += "; frozen (stopped by a signal)";
  if (f.asked && !f.answered) s += "; did not answer SIGUSR2";
  if (!f.exit.empty()) s += "; " + f.exit + (f.by_launcher ? " (stopped by ddlrun)" : "");
  if (!f.host_note.empty()) s += "; " + f.host_note;
  if (f.dump)
    for (const DumpGroup& g : f.dump->groups)
      if (g.id == p.group && g.suspect >= 0 && !g.suspect_note.empty()) s += "\n      it said: " + g.suspect_note;
  return s + "\n";
}

}  // namespace

RankDump parse_dump(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw std::runtime_error("not a JSON object");
  RankDump d;
  try {
    d.rank = j.at("rank").get<int>();
    d.host = j.value("host", "");
    d.reason = j.value("reason", "");
    d.failure = j.value("failure", "");
    d.time_ns = j.value("time_ns", int64_t(0));
    for (const auto& g : j.at("groups"))
      d.groups.push_back({g.at("id").get<int>(), g.value("rank", 0), g.value("size", 0),
                          g.value("last_completed", int64_t(0)), g.value("suspect", -1), g.value("suspect_note", "")});
    for (const auto& e : j.at("entries")) {
      DumpEntry x;
      x.group = e.value("group", 0);
      x.seq = e.value("seq", uint64_t(0));
      x.op = e.value("op", "");
      x.desc = e.value("desc", "");
      x.state = e.value("state", "");
      x.p2p = e.value("p2p", false);
      x.peer = e.value("peer", -1);
      x.start_ns = e.value("start_ns", int64_t(0));
      x.end_ns = e.value("end_ns", int64_t(0));
      d.entries.push_back(std::move(x));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(e.what());
  }
  return d;
}

void read_dumps(const std::string& dir, std::vector<RankFacts>& facts) {
  for (RankFacts& f : facts) {
    std::ifstream in(dir + "/rank" + std::to_string(f.rank) + ".json");
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      f.dump = parse_dump(ss.str());
    } catch (const std::exception&) {
      // A torn dump (the rank died writing it) counts as none.
    }
  }
}

Verdict decide(const std::vector<RankFacts>& ranks) {
  Verdict v;
  std::vector<Position> pos(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].dump) pos[i] = position_of(*ranks[i].dump);
  auto finish = [&] {
    std::string head = v.kind == Verdict::Desync ? "desync" : v.kind == Verdict::Stall ? "stall" : "undetermined";
    v.text = "ddlrun: verdict: " + head;
    if (v.rank >= 0) {
      v.text += ": rank " + std::to_string(v.rank) + " on host " + v.host + " stopped first";
      if (!v.op.empty())
        v.text += ", at " +
                  (v.op == "rendezvous" ? std::string("the rendezvous") : op_name(v.op) + " #" + std::to_string(v.seq));
      if (v.op.find('(') != std::string::npos) v.text += " [" + v.op + "]";
    }
    v.text += "\n  why: " + v.why + "\n";
    for (size_t i = 0; i < ranks.size(); ++i) v.text += rank_line(ranks[i], pos[i]);
    return v;
  };
  auto blame = [&](size_t i, Verdict::Kind kind, const std::string& why) {
    v.kind = kind;
    v.rank = ranks[i].rank;
    v.host = ranks[i].host;
    v.why = why;
  };

  // 1. A desync: two ranks recorded different collectives under one sequence number.
  std::map<uint64_t, std::vector<std::pair<size_t, std::string>>> by_seq;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].dump)
      for (const DumpEntry& e : ranks[i].dump->entries)
        if (!e.p2p && e.op != "rendezvous" && e.group == pos[i].group) by_seq[e.seq].emplace_back(i, e.desc);
  for (const auto& [seq, calls] : by_seq) {
    std::map<std::string, std::vector<int>> who;
    for (const auto& [i, desc] : calls) who[desc].push_back(ranks[i].rank);
    if (who.size() < 2) continue;
    // The odd one out: the call fewest ranks made (on a tie, not the lowest rank's call).
    std::string usual = calls.front().second;
    for (const auto& [desc, rs] : who)
      if (rs.size() > who[usual].size()) usual = desc;
    for (const auto& [i, desc] : calls)
      if (desc != usual) {
        blame(i, Verdict::Desync,
              rank_list({ranks[i].rank}) + " called " + desc + " as collective #" + std::to_string(seq) + " while " +
                  rank_list(who[usual]) + " called " + usual);
        v.op = desc;
        v.seq = seq;
        return finish();
      }
  }

  // Where the ranks that did dump were waiting: the most common collective among them.
  std::map<std::pair<uint64_t, std::string>, int> waits;
  for (const Position& p : pos)
    if (p.known && !p.desc.empty()) ++waits[{p.at, p.desc}];
  std::pair<uint64_t, std::string> waited{0, ""};
  int most = 0;
  for (const auto& [w, n] : waits)
    if (n > most) most = n, waited = w;
  auto others_of = [&](size_t culprit) {
    std::vector<int> rs;
    for (size_t i = 0; i < ranks.size(); ++i)
      if (i != culprit && pos[i].known && pos[i].at == waited.first && pos[i].desc == waited.second)
        rs.push_back(ranks[i].rank);
    return rs;
  };
  auto stall = [&](size_t i, const std::string& what) {
    const Position& p = pos[i];
    const bool own = p.known && !p.desc.empty();
    v.op = own ? p.desc : waited.second;
    v.seq = own ? p.at : waited.first;
    std::string why = what;
    if (!waited.second.empty()) {
      const std::vector<int> rs = others_of(i);
      if (!rs.empty())
        why += "; " + rank_list(rs) + " waited for it in " + waited.second + " #" + std::to_string(waited.first);
    }
    if (p.known) why += "; its last completed collective is #" + std::to_string(p.last_completed);
    blame(i, Verdict::Stall, why);
    return finish();
  };

  // 2. Before the first collective: a rank that never joined the rendezvous. One that left no
  //    dump first: a rank that did dump, without a failed rendezvous, may only have started late
  //    and been stopped by the launcher while it still waited.
  bool any_collective = false, rendezvous_failed = false;
  for (const Position& p : pos) any_collective |= p.any_collective, rendezvous_failed |= p.rendezvous_failed;
  if (!any_collective && rendezvous_failed)
    for (const bool need_no_dump : {true, false})
      for (size_t i = 0; i < ranks.size(); ++i)
        if (need_no_dump ? !ranks[i].dump : !pos[i].rendezvous_failed) {
          v.op = "rendezvous";
          blame(i, Verdict::Stall,
                "it never joined the rendezvous (it did not start, or could not reach the store); the others' "
                "rendezvous failed waiting for it" +
                    (ranks[i].exit.empty() ? "" : "; it " + ranks[i].exit));
          return finish();
        }

  // 3. A stall, strongest evidence first: a rank seen frozen, one that crashed, a host the launcher knows is in
  //    trouble, a rank that left no dump (killed, powered off), a rank behind the others, the
  //    rank the others' timeouts blamed.
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].stopped || (ranks[i].asked && !ranks[i].answered))
      return stall(i, ranks[i].stopped ? "it was frozen: stopped by a signal, it answered nobody"
                                       : "it did not answer SIGUSR2 (frozen or wedged)");
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].dump && (ranks[i].dump->reason.rfind("fatal signal", 0) == 0 ||
                          ranks[i].dump->reason.rfind("Gloo's network thread", 0) == 0))
      return stall(i, "it crashed: " + ranks[i].dump->reason + " (its dump, written by the signal handler)");
  for (size_t i = 0; i < ranks.size(); ++i)
    if (!ranks[i].host_note.empty()) return stall(i, "the launcher reports " + ranks[i].host_note);
  for (size_t i = 0; i < ranks.size(); ++i)
    if (!ranks[i].dump)
      return stall(i, "it left no dump (" + (ranks[i].exit.empty() ? std::string("no exit seen") : ranks[i].exit) +
                          "): it died, or its host went down");
  size_t low = ranks.size();
  for (size_t i = 0; i < ranks.size(); ++i)
    if (pos[i].known && (low == ranks.size() || pos[i].last_completed < pos[low].last_completed)) low = i;
  for (size_t i = 0; low < ranks.size() && i < ranks.size(); ++i)
    if (pos[i].known && pos[i].last_completed > pos[low].last_completed)
      return stall(low, "it is behind: the others completed more collectives");
  std::map<int, int> votes;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].dump)
      for (const DumpGroup& g : ranks[i].dump->groups)
        if (g.id == pos[i].group && g.suspect >= 0 && g.suspect != ranks[i].rank) ++votes[g.suspect];
  int best = -1;
  for (const auto& [r, n] : votes)
    if (best < 0 || n > votes[best]) best = r;
  for (size_t i = 0; best >= 0 && i < ranks.size(); ++i)
    if (ranks[i].rank == best)
      return stall(i, "the others' timeouts blamed it (" + std::to_string(votes[best]) + " of " +
                          std::to_string(ranks.size() - 1) + " ranks): it did not report its position in the store");
  for (size_t i = 0; i < ranks.size(); ++i)
    if (!ranks[i].exit.empty() && !ranks[i].by_launcher) return stall(i, "it failed first: " + ranks[i].exit);
  v.why = "no rank stands out in the dumps";
  return finish();
}

}  // namespace ddl::launcher
