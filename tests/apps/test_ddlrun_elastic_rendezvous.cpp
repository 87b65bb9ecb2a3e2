// ddlrun's elastic rendezvous in one process (apps/ddlrun/elastic_rendezvous.h; Notes
// [Elastic rounds] and [Elastic store failover]): three "nodes" as threads, each serving its
// candidate store on 127.0.0.<i+1>. Checks: the first round admits all three in node order;
// a node arriving during a round waits and is seen by membership_changed below MAX but not at
// MAX; a member that joins the next round (its workers failed) is seen at MAX too; when the
// leader's store dies the others fail over to node 1's store, with the next round number.
#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <thread>

#include "apps/ddlrun/elastic_rendezvous.h"
#include <ddl/dist/store/socket.h>

using namespace ddl::launcher::elastic;

namespace {
const std::string kToken = "0123456789abcdef0123456789abcdef";

struct Nodes {
  int port = ddl::dist::detail::find_free_port("127.0.0.1");
  std::vector<std::string> candidates{"127.0.0.1", "127.0.0.2", "127.0.0.3"};
  std::vector<std::unique_ptr<ddl::dist::TCPStoreServer>> servers;
  Nodes() {
    for (const auto& c : candidates) servers.push_back(std::make_unique<ddl::dist::TCPStoreServer>(c, port, kToken));
  }
  RendezvousConfig config(int id, int min_nodes, int max_nodes) const {
    RendezvousConfig c;
    c.min_nodes = min_nodes;
    c.max_nodes = max_nodes;
    c.node_id = id;
    c.candidates = candidates;
    c.port = port;
    c.token = kToken;
    c.last_call_s = 0.5;
    c.join_timeout_s = 20;
    c.probe_timeout_s = 0.5;
    return c;
  }
};

// Polls membership_changed (rate-limited inside) for up to `seconds`.
bool changes_within(Rendezvous& r, const Round& round, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (r.membership_changed(round)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}
}  // namespace

TEST_CASE("elastic rendezvous: rounds, a waiting node, a failed member") {
  Nodes nodes;
  SECTION("below MAX a waiting node restarts the round") {
    Rendezvous a(nodes.config(0, 2, 3)), b(nodes.config(1, 2, 3)), c(nodes.config(2, 2, 3));
    auto fa = std::async(std::launch::async, [&] { return a.next_round(); });
    auto fb = std::async(std::launch::async, [&] { return b.next_round(); });
    const Round ra = fa.get(), rb = fb.get();
    REQUIRE(ra.number == 0);
    CHECK(ra.nodes == std::vector<int>{0, 1});
    CHECK(ra.position == 0);
    CHECK(rb.position == 1);
    CHECK(ra.store_host == "127.0.0.1");
    CHECK_FALSE(changes_within(a, ra, 0.6));
    auto fc = std::async(std::launch::async, [&] { return c.next_round(); });  // waits for round 1
    CHECK(changes_within(a, ra, 3));
    CHECK_THAT(a.why(), Catch::Contains("node 2 waits to join"));
    auto fa1 = std::async(std::launch::async, [&] { return a.next_round(); });
    auto fb1 = std::async(std::launch::async, [&] { return b.next_round(); });
    const Round r1 = fa1.get();
    fb1.get();
    const Round rc = fc.get();
    CHECK(r1.number == 1);
    CHECK(r1.nodes == std::vector<int>{0, 1, 2});
    CHECK(rc.position == 2);
  }
  SECTION("at MAX a newcomer waits, but a member leaving restarts the round") {
    Rendezvous a(nodes.config(0, 1, 2)), b(nodes.config(1, 1, 2)), c(nodes.config(2, 1, 2));
    auto fa = std::async(std::launch::async, [&] { return a.next_round(); });
    auto fb = std::async(std::launch::async, [&] { return b.next_round(); });
    const Round ra = fa.get(), rb = fb.get();
    REQUIRE(ra.nodes == std::vector<int>{0, 1});
    auto fc = std::async(std::launch::async, [&] { return c.next_round(); });  // waits: the round is full
    CHECK_FALSE(changes_within(a, ra, 1.2));
    // Node 1's workers failed: it joins the next round, where node 2 waits already.
    const Round rb1 = b.next_round();
    const Round rc = fc.get();
    CHECK(rb1.number == 1);
    CHECK(rb1.nodes == std::vector<int>{1, 2});
    CHECK(rc.nodes == std::vector<int>{1, 2});
    CHECK(changes_within(a, ra, 2));
    CHECK_THAT(a.why(), Catch::Contains("node 1 of this round left it"));
  }
}

TEST_CASE("elastic rendezvous: the store fails over when its node dies") {
  Nodes nodes;
  Rendezvous a(nodes.config(0, 2, 3)), b(nodes.config(1, 2, 3)), c(nodes.config(2, 2, 3));
  auto fa = std::async(std::launch::async, [&] { return a.next_round(); });
  auto fb = std::async(std::launch::async, [&] { return b.next_round(); });
  auto fc = std::async(std::launch::async, [&] { return c.next_round(); });
  fa.get();
  const Round rb = fb.get(), rc = fc.get();
  REQUIRE(rb.nodes == std::vector<int>{0, 1, 2});
  a.disconnect();
  nodes.servers[0].reset();  // node 0 is gone, with the rendezvous state
  CHECK(changes_within(b, rb, 3));
  CHECK_THAT(b.why(), Catch::Contains("127.0.0.1 is lost"));
  auto fb1 = std::async(std::launch::async, [&] { return b.next_round(); });
  auto fc1 = std::async(std::launch::async, [&] { return c.next_round(); });
  const Round rb1 = fb1.get(), rc1 = fc1.get();
  CHECK(rb1.number == 1);
  CHECK(rb1.nodes == std::vector<int>{1, 2});
  CHECK(rb1.store_host == "127.0.0.2");
  CHECK(rc1.store_host == "127.0.0.2");
  CHECK(rb1.position == 0);
}

TEST_CASE("parse_nnodes") {
  CHECK(parse_nnodes("3") == std::pair<int, int>{3, 3});
  CHECK(parse_nnodes("2:4") == std::pair<int, int>{2, 4});
  CHECK_THROWS_WITH(parse_nnodes("4:2"), Catch::Contains("MIN is above MAX"));
  CHECK_THROWS_WITH(parse_nnodes("0:2"), Catch::Contains("expected N or MIN:MAX"));
  CHECK_THROWS_WITH(parse_nnodes("2:"), Catch::Contains("expected N or MIN:MAX"));
}
