// ddlrun's verdict from synthetic flight-recorder dumps (apps/ddlrun/verdict.h): no processes,
// the dumps written as the ranks write them (dist/flight/recorder.cpp's JSON), each case one
// kind of failure and the rank, host and collective the verdict must name.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "apps/ddlrun/verdict.h"

using namespace ddl::launcher;

namespace {

struct Op {
  uint64_t seq;
  std::string desc, state;
};

const std::string kAllReduce = "all_reduce(float32 x 1000, sum)";
const std::string kBroadcast = "broadcast(float32 x 1000, root=0)";

// A dump as dist/flight writes it: the rendezvous, `ops` of group 0, a suspect.
std::string dump_json(int rank, const std::string& host, int64_t last_completed, const std::vector<Op>& ops,
                      int suspect = -1, bool rendezvous_failed = false) {
  nlohmann::json j = {{"version", 1},      {"rank", rank}, {"world", 3},   {"host", host},
                      {"pid", 100 + rank}, {"time_ns", 1}, {"reason", ""}, {"failure", ""}};
  j["groups"] = nlohmann::json::array();
  if (!rendezvous_failed)
    j["groups"].push_back({{"id", 0},
                           {"backend", "gloo"},
                           {"rank", rank},
                           {"size", 3},
                           {"last_started", last_completed + 1},
                           {"last_completed", last_completed},
                           {"suspect", suspect},
                           {"suspect_note", suspect >= 0 ? "rank " + std::to_string(suspect) + " never arrived" : ""}});
  j["entries"] = {{{"group", -1},
                   {"seq", 0},
                   {"op", "rendezvous"},
                   {"p2p", false},
                   {"peer", -1},
                   {"desc", "rendezvous of 3 ranks"},
                   {"state", rendezvous_failed ? "failed" : "completed"},
                   {"start_ns", 1},
                   {"end_ns", 2}}};
  for (const Op& o : ops)
    j["entries"].push_back({{"group", 0},
                            {"seq", o.seq},
                            {"op", o.desc.substr(0, o.desc.find('('))},
                            {"p2p", false},
                            {"peer", -1},
                            {"desc", o.desc},
                            {"state", o.state},
                            {"start_ns", 1000 + o.seq},
                            {"end_ns", 0}});
  return j.dump();
}

std::vector<Op> ran(uint64_t upto, const std::string& then = "", const std::string& state = "failed") {
  std::vector<Op> ops;
  for (uint64_t s = 1; s <= upto; ++s) ops.push_back({s, kAllReduce, "completed"});
  if (!then.empty()) ops.push_back({upto + 1, then, state});
  return ops;
}

RankFacts rank(int r, const std::string& json = "") {
  RankFacts f;
  f.rank = r;
  f.host = "host" + std::to_string(r);
  f.exit = "exited with status 1";
  if (!json.empty()) f.dump = parse_dump(json);
  return f;
}

}  // namespace

TEST_CASE("verdict: a rank that called another collective at the same seq is a desync", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 5, ran(5, kAllReduce))),
                                  rank(1, dump_json(1, "host1", 5, ran(5, kBroadcast))),
                                  rank(2, dump_json(2, "host2", 5, ran(5, kAllReduce)))};
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Desync);
  CHECK(v.rank == 1);
  CHECK(v.host == "host1");
  CHECK(v.seq == 6);
  CHECK(v.op == kBroadcast);
  CHECK_THAT(v.text, Catch::Contains("desync: rank 1 on host host1 stopped first, at broadcast #6"));
  CHECK_THAT(v.text, Catch::Contains("ranks 0,2 called " + kAllReduce));
}

TEST_CASE("verdict: with two ranks, a desync blames the one whose call is not rank 0's", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 2, ran(2, kAllReduce))),
                                  rank(1, dump_json(1, "host1", 2, ran(2, kBroadcast)))};
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Desync);
  CHECK(v.rank == 1);
  CHECK(v.seq == 3);
}

TEST_CASE("verdict: a frozen rank is the stall, at the collective the others waited in", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 5, ran(5, kAllReduce), 2)),
                                  rank(1, dump_json(1, "host1", 5, ran(5, kAllReduce), 2)), rank(2)};
  ranks[2].stopped = true;
  ranks[2].asked = true;
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Stall);
  CHECK(v.rank == 2);
  CHECK(v.host == "host2");
  CHECK(v.seq == 6);
  CHECK(v.op == kAllReduce);
  CHECK_THAT(v.why, Catch::Contains("frozen"));
  CHECK_THAT(v.why, Catch::Contains("ranks 0,1 waited for it in " + kAllReduce + " #6"));
}

TEST_CASE("verdict: a rank silent after SIGUSR2 is blamed; one that dumped and exited is not", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 5, ran(5, kAllReduce))),
                                  rank(1, dump_json(1, "host1", 5, ran(5, kAllReduce))),
                                  rank(2, dump_json(2, "host2", 5, ran(5, kAllReduce)))};
  for (auto& f : ranks) f.asked = true;
  ranks[0].answered = ranks[2].answered = true;
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Stall);
  CHECK(v.rank == 1);
  CHECK_THAT(v.why, Catch::Contains("did not answer SIGUSR2"));
}

TEST_CASE("verdict: a rank that left no dump (killed, powered off) is the stall", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 7, ran(7, kAllReduce))), rank(1),
                                  rank(2, dump_json(2, "host2", 7, ran(7, kAllReduce)))};
  ranks[1].exit = "was killed by signal 9 (SIGKILL)";
  ranks[0].by_launcher = ranks[2].by_launcher = true;
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Stall);
  CHECK(v.rank == 1);
  CHECK(v.seq == 8);
  CHECK(v.op == kAllReduce);
  CHECK_THAT(v.why, Catch::Contains("left no dump (was killed by signal 9 (SIGKILL))"));
}

TEST_CASE("verdict: a rank whose dump a fatal signal wrote crashed", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 4, ran(4, kAllReduce))),
                                  rank(1, dump_json(1, "host1", 4, ran(4))),
                                  rank(2, dump_json(2, "host2", 4, ran(4, kAllReduce)))};
  auto text = dump_json(1, "host1", 4, ran(4));
  text.replace(text.find("\"reason\":\"\""), 11, "\"reason\":\"fatal signal SIGSEGV\"");
  ranks[1].dump = parse_dump(text);
  ranks[1].exit = "was killed by signal 11 (SIGSEGV)";
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Stall);
  CHECK(v.rank == 1);
  CHECK(v.seq == 5);
  CHECK_THAT(v.why, Catch::Contains("it crashed: fatal signal SIGSEGV"));
}

TEST_CASE("verdict: a rank that never joined the rendezvous is named, at the rendezvous", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 0, {}, -1, true)), rank(1),
                                  rank(2, dump_json(2, "host2", 0, {}, -1, true))};
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Stall);
  CHECK(v.rank == 1);
  CHECK(v.op == "rendezvous");
  CHECK_THAT(v.text, Catch::Contains("rank 1 on host host1 stopped first, at the rendezvous"));
}

TEST_CASE("verdict: at the rendezvous, a rank with no dump outranks one stopped while waiting", "[ddlrun]") {
  // Rank 0 started late: the launcher stopped it, still inside the rendezvous, when rank 2's timed out.
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 0, {})), rank(1),
                                  rank(2, dump_json(2, "host2", 0, {}, -1, true))};
  ranks[0].by_launcher = true;
  ranks[0].exit = "was killed by signal 15 (SIGTERM)";
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Stall);
  CHECK(v.rank == 1);
  CHECK(v.op == "rendezvous");
}

TEST_CASE("verdict: every rank dumped at one collective: the launcher's host note, else the ranks' votes", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 9, ran(9, kAllReduce), 1)),
                                  rank(1, dump_json(1, "host1", 9, ran(9, kAllReduce, "started"))),
                                  rank(2, dump_json(2, "host2", 9, ran(9, kAllReduce), 1))};
  SECTION("the others' timeouts blamed rank 1 (a cut link nobody reported)") {
    const Verdict v = decide(ranks);
    CHECK(v.kind == Verdict::Stall);
    CHECK(v.rank == 1);
    CHECK(v.seq == 10);
    CHECK_THAT(v.why, Catch::Contains("blamed it (2 of 2 ranks)"));
  }
  SECTION("the launcher knows host2's link is down") {
    ranks[2].host_note = "host2's link is down (--link-flap host2=1,60)";
    const Verdict v = decide(ranks);
    CHECK(v.rank == 2);
    CHECK_THAT(v.why, Catch::Contains("host2's link is down"));
  }
}

TEST_CASE("verdict: a rank behind the others is the stall", "[ddlrun]") {
  std::vector<RankFacts> ranks = {rank(0, dump_json(0, "host0", 5, ran(5, kAllReduce))),
                                  rank(1, dump_json(1, "host1", 5, ran(5, kAllReduce))),
                                  rank(2, dump_json(2, "host2", 3, ran(3)))};
  const Verdict v = decide(ranks);
  CHECK(v.kind == Verdict::Stall);
  CHECK(v.rank == 2);
  CHECK_THAT(v.why, Catch::Contains("behind"));
}

TEST_CASE("verdict: a dump that is not the recorder's JSON is refused", "[ddlrun]") {
  CHECK_THROWS(parse_dump("{\"rank\": 1"));
  CHECK_THROWS(parse_dump("[]"));
  CHECK_THROWS(parse_dump("{\"groups\": []}"));
}
