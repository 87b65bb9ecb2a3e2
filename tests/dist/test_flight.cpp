// The flight recorder (dist/flight/): what a timed-out collective's error and each rank's
// dump say about the rank that never arrived, the ring's wrap at DDL_FLIGHT_RECORDER
// entries, the dump on SIGUSR2, and laggard.h's judgement on the ranks' positions.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/dist/dist.h>
#include <ddl/dist/flight/laggard.h>
#include <ddl/dist/flight/recorder.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::dist;
using ddl::test::contains;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fresh_dir() {
  char dir[] = "/tmp/ddl_test_flight.XXXXXX";
  return mkdtemp(dir) ? std::string(dir) : std::string("/nonexistent");
}

flight::Position at(int rank, uint64_t last, uint64_t seq, const std::string& op) {
  flight::Position p;
  p.rank = rank;
  p.reported = true;
  p.last_completed = last;
  p.at_seq = seq;
  p.op = op;
  p.host = "h" + std::to_string(rank);
  return p;
}

}  // namespace

TEST_CASE("flight: a timed-out all_reduce names the rank that never arrived; the dumps say where each waited",
          "[dist]") {
  // DDL_DEBUG's check before the collective times out instead: it names the rank the same way.
  for (const int debug : {0, 1}) DYNAMIC_SECTION("DDL_DEBUG " << debug) {
      const std::string dir = test::from_parent("flight_dir" + std::to_string(debug), fresh_dir);
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(
          3,
          [&](int rank) {
            setenv("DDL_FLIGHT_DIR", dir.c_str(), 1);
            GlooOptions go = test::gloo_options(Millis(1000), 0);
            go.debug = debug;
            ProcessGroupGloo pg(test::store_client(port, Millis(10000)), rank, 3, go);
            Tensor t = ones(Shape{100});
            pg.all_reduce(t);  // #1, everyone
            if (rank == 2) {   // never arrives at #2
              std::this_thread::sleep_for(std::chrono::milliseconds(3000));
              return;
            }
            try {
              pg.all_reduce(t);
              DIST_EXPECT(false, "no timeout");
            } catch (const Error& e) {
              DIST_EXPECT(contains(e.what(), "#2: rank 2 on host ") && contains(e.what(), "never arrived") &&
                              contains(e.what(), "ranks 0,1 waited 1.0 s") &&
                              (debug || contains(e.what(), "last heard from rank 2")),
                          "message: ", e.what());
            }
            const auto dump = nlohmann::json::parse(read_text(dir + "/rank" + std::to_string(rank) + ".json"));
            DIST_EXPECT(
                dump["rank"] == rank && dump["groups"][0]["suspect"] == 2 && dump["groups"][0]["last_completed"] == 1,
                "dump: ", dump.dump());
            const auto& e = dump["entries"];
            DIST_EXPECT(e.size() == 2 && e[0]["seq"] == 1 && e[0]["state"] == "completed" && e[1]["seq"] == 2 &&
                            e[1]["state"] == "failed" && e[1]["op"] == "all_reduce",
                        "entries: ", e.dump());
          },
          30);
      INFO(test::describe(outs));
      CHECK(test::all_ok(outs));
      std::filesystem::remove_all(dir);
    }
}

TEST_CASE("flight: the ring keeps the last DDL_FLIGHT_RECORDER entries; SIGUSR2 dumps them", "[dist]") {
  const std::string dir = test::from_parent("flight_dir", fresh_dir);
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(
      1,
      [&](int rank) {
        setenv("DDL_FLIGHT_RECORDER", "4", 1);
        setenv("DDL_FLIGHT_DIR", dir.c_str(), 1);
        ProcessGroupGloo pg(test::store_client(port, Millis(10000)), rank, 1, test::gloo_options(Millis(1000), 0));
        for (int i = 0; i < 10; ++i) pg.all_reduce(ones(Shape{8}));
        const auto j = nlohmann::json::parse(flight::to_json("test"));
        const auto& e = j["entries"];
        DIST_EXPECT(j["capacity"] == 4 && e.size() == 4 && e[0]["seq"] == 7 && e[3]["seq"] == 10 &&
                        e[3]["state"] == "completed" && e[3]["desc"] == "all_reduce(float32 x 8, sum)",
                    "dump: ", j.dump());
        raise(SIGUSR2);  // handled by the recorder's thread (Note [Flight dumps])
        const std::string path = dir + "/rank0.json";
        for (int i = 0; i < 200 && !std::filesystem::exists(path); ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const auto d = nlohmann::json::parse(read_text(path));
        DIST_EXPECT(contains(d["reason"].get<std::string>(), "SIGUSR2") && d["entries"].size() == 4,
                    "dump: ", d.dump());
        DIST_EXPECT((std::filesystem::status(path).permissions() & std::filesystem::perms::others_read) ==
                        std::filesystem::perms::none,
                    "the dump is readable by others");
      },
      30);
  INFO(test::describe(outs));
  CHECK(test::all_ok(outs));
  std::filesystem::remove_all(dir);
}

TEST_CASE("flight: judge blames a desync, a rank behind, a silent rank, or nobody", "[dist]") {
  const std::string ar = "all_reduce(float32 x 4, sum)", bc = "broadcast(float32 x 4, root=0)";
  const Millis waited(5000);
  SECTION("a different op at the same seq") {
    const auto l = flight::judge(at(0, 4, 5, ar), {at(1, 4, 5, bc), at(2, 4, 5, ar)}, 5, waited);
    CHECK(l.desync);
    CHECK(l.rank == 1);
    CHECK(l.message == "desync at collective #5: rank 1 on host h1 called " + bc + " while ranks 0,2 called " + ar);
  }
  SECTION("this rank is the odd one out") {
    const auto l = flight::judge(at(1, 4, 5, bc), {at(0, 4, 5, ar), at(2, 4, 5, ar)}, 5, waited);
    CHECK(l.desync);
    CHECK(l.rank == 1);
  }
  SECTION("a rank still in an earlier collective") {
    const auto l = flight::judge(at(0, 4, 5, ar), {at(1, 2, 3, ar), at(2, 4, 5, ar)}, 5, waited);
    CHECK(!l.desync);
    CHECK(l.rank == 1);
    CHECK(contains(l.message, "still in " + ar + " #3"));
  }
  SECTION("a rank that did not report") {
    flight::Position silent;
    silent.rank = 2;
    silent.host = "h2";
    const auto l = flight::judge(at(0, 4, 5, ar), {at(1, 4, 5, ar), silent}, 5, waited);
    CHECK(l.rank == 2);
    CHECK(l.message == ar + " #5: rank 2 on host h2 never arrived (ranks 0,1 waited 5.0 s; it did not report its " +
                           "position: frozen, dead, cut off, or busy before #5)");
  }
  SECTION("everyone arrived") {
    const auto l = flight::judge(at(0, 4, 5, ar), {at(1, 4, 5, ar), at(2, 4, 5, ar)}, 5, waited);
    CHECK(l.rank == -1);
    CHECK(contains(l.message, "every rank arrived"));
  }
}
