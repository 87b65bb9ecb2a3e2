// The pieces of ddlrun's multi-node launch that need no process: node records and their
// agreement (apps/ddlrun/node_agreement.h), ranks of uneven nodes, hostfiles and host lists
// (launch_flags.h), and torchrun's rendezvous endpoint in its command line
// (dist/launch/torchrun_token.h). The whole launches: tests/apps/test_ddlrun_nodes.sh.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "apps/ddlrun/launch_flags.h"
#include "apps/ddlrun/node_agreement.h"
#include <ddl/dist/launch/torchrun_token.h>

using namespace ddl::launcher;
using Catch::Contains;

namespace {
NodeRecord node(int rank, int nproc, const std::string& program, const std::string& host) {
  NodeRecord r;
  r.node_rank = rank;
  r.nnodes = 2;
  r.nproc = nproc;
  r.host = host;
  r.program = program;
  r.version = "1.0";
  return r;
}
}  // namespace

TEST_CASE("node agreement: uneven nodes get consecutive ranks", "[ddlrun]") {
  const Layout l = layout_of({node(0, 2, "p", "a"), node(1, 1, "p", "b")});
  CHECK(l.world == 3);
  CHECK(l.first_rank == std::vector<int>{0, 2});
}

TEST_CASE("node agreement: a record survives encoding, newlines in the program included", "[ddlrun]") {
  NodeRecord r = node(1, 3, "prog --text 'a\nb' --x\\y", "h\n2");
  r.expected_world = 5;
  r.args_may_differ = true;
  const NodeRecord back = NodeRecord::decode(r.encode(), "test");
  CHECK(back.node_rank == 1);
  CHECK(back.nproc == 3);
  CHECK(back.expected_world == 5);
  CHECK(back.args_may_differ);
  CHECK(back.program == r.program);
  CHECK(back.host == r.host);
  CHECK_THROWS_WITH(NodeRecord::decode("something else", "key k"), Contains("key k is not a ddlrun node record"));
}

TEST_CASE("node agreement: the node that differs is named with its host and the difference", "[ddlrun]") {
  CHECK(disagreement({node(0, 2, "p --lr 1", "a"), node(1, 1, "p --lr 1", "b")}).empty());
  const std::string why = disagreement({node(0, 2, "p --lr 1 --x", "a"), node(1, 1, "p --lr 2 --x", "b")});
  CHECK_THAT(why, Contains("node 1 (host b) differs from node 0 (host a)") && Contains("'...2 --x' there") &&
                      Contains("'...1 --x' on node 0"));
  NodeRecord other = node(1, 1, "p", "b");
  other.version = "2.0";
  other.nnodes = 3;
  CHECK_THAT(disagreement({node(0, 1, "p", "a"), other}),
             Contains("ddl version 2.0 there, 1.0 on node 0") && Contains("--nnodes 3 there, 2 on node 0"));
  // A hostfile's slots that the nodes' own counts contradict.
  NodeRecord planned = node(1, 1, "p", "b");
  planned.expected_world = 4;
  CHECK_THAT(disagreement({node(0, 2, "p", "a"), planned}), Contains("its hostfile makes 4 ranks, the nodes start 3"));
  // --args-may-differ: the program must still agree, its arguments need not.
  NodeRecord loose = node(1, 1, "p --out b.json", "b");
  loose.args_may_differ = true;
  CHECK(disagreement({node(0, 1, "p --out a.json", "a"), loose}).empty());
  loose.program = "q --out b.json";
  CHECK_THAT(disagreement({node(0, 1, "p --out a.json", "a"), loose}), Contains("'q' there, 'p' on node 0"));
}

TEST_CASE("hostfile: Open MPI's format and -H", "[ddlrun]") {
  const std::string path = "/tmp/ddl_hostfile_" + std::to_string(getpid());
  std::ofstream(path) << "# nodes\nn1 slots=2  # two\n\nn2 slots=1 max_slots=8\nn3\n";
  const auto hosts = read_hostfile(path);
  REQUIRE(hosts.size() == 3);
  CHECK((hosts[0].host == "n1" && hosts[0].slots == 2));
  CHECK((hosts[1].host == "n2" && hosts[1].slots == 1));
  CHECK((hosts[2].host == "n3" && hosts[2].slots == 1));
  std::ofstream(path) << "n1 slots=0\n";
  CHECK_THROWS_WITH(read_hostfile(path), Contains("line 1: slots '0' is not a count"));
  std::ofstream(path) << "n1 cpus=2\n";
  CHECK_THROWS_WITH(read_hostfile(path), Contains("'cpus=2' is not slots=N"));
  std::remove(path.c_str());
  const auto list = parse_host_list("a:2,b,::1");
  REQUIRE(list.size() == 3);
  CHECK((list[0].slots == 2 && list[1].slots == 1 && list[2].host == "::1"));
  CHECK_THROWS_WITH(parse_host_list("a:2,,b"), Contains("empty host"));

  Config cfg;
  REQUIRE(apply_hosts(cfg, {{"x1", 2}, {"x2", 1}}, "-H", true, false, false) == 0);  // node rank 0
  CHECK((cfg.nnodes == 2 && cfg.nproc == 2 && cfg.master_addr == "x1" && cfg.expected_world == 3));
  cfg.node_rank = 1;
  REQUIRE(apply_hosts(cfg, {{"x1", 2}, {"x2", 1}}, "-H", true, false, false) == 0);
  CHECK(cfg.nproc == 1);
}

TEST_CASE("emulated hosts of different sizes: each rank's host and local rank", "[ddlrun]") {
  Config cfg;
  cfg.ranks_per_host = 2;
  CHECK((cfg.host_of(0) == 0 && cfg.host_of(1) == 0 && cfg.host_of(3) == 1 && cfg.ranks_on_host(1) == 2));
  cfg.host_slots = {2, 1, 3};
  CHECK((cfg.host_of(0) == 0 && cfg.host_of(1) == 0 && cfg.host_of(2) == 1 && cfg.host_of(3) == 2 &&
         cfg.host_of(5) == 2));
  CHECK((cfg.first_rank_on_host(1) == 2 && cfg.first_rank_on_host(2) == 3 && cfg.first_rank_on_host(3) == 6));
  CHECK((cfg.ranks_on_host(0) == 2 && cfg.ranks_on_host(1) == 1 && cfg.ranks_on_host(2) == 3));
  Config fresh;
  REQUIRE(apply_emulated_hosts(fresh, 2, "", "host0:2,host1:1") == 0);
  CHECK(fresh.host_slots == std::vector<int>{2, 1});
  CHECK(apply_emulated_hosts(fresh, 3, "", "host0:2,host1:1") == 2);
}

TEST_CASE("unknown flags before the program are usage errors", "[ddlrun]") {
  CHECK(refuse_unknown_flag({"prog", "--x"}) == 0);
  CHECK(refuse_unknown_flag({}) == 0);
  CHECK(refuse_unknown_flag({"--rdzv_backend", "c10d", "prog"}) == 2);
  CHECK(refuse_unknown_flag({"--standalone", "prog"}) == 2);
}

TEST_CASE("torchrun's c10d endpoint is read from its command line", "[ddlrun]") {
  using ddl::dist::detail::c10d_endpoint;
  CHECK(c10d_endpoint({"torchrun", "--rdzv_backend", "c10d", "--rdzv_endpoint", "n1:1234", "prog"}) == "n1:1234");
  CHECK(c10d_endpoint({"torchrun", "--rdzv-backend=c10d", "--rdzv-endpoint=n1", "prog"}) == "n1:29400");
  CHECK(c10d_endpoint({"torchrun", "--rdzv_backend=c10d", "--rdzv_endpoint", "[::1]", "p"}) == "[::1]:29400");
  CHECK(c10d_endpoint({"torchrun", "--rdzv_backend", "static", "--rdzv_endpoint", "n1:1", "p"}).empty());
  CHECK(c10d_endpoint({"torchrun", "--nproc_per_node", "2", "prog"}).empty());
}
