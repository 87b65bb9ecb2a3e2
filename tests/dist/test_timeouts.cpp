// Bounded waits and the messages that end them: DDL_TIMEOUT, a rendezvous whose peer never
// comes (one deadline, not Gloo's five-fold connect wait), a wrong interface (named with
// the interfaces that exist, and the other ranks stop at once), and mismatched sizes over
// TCP, which Gloo's network thread meets first (an exit with a message, never SIGABRT).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/dist/dist.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::dist;
using Catch::Contains;
using ddl::test::seconds_since;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("timeouts: DDL_TIMEOUT sets the default, in seconds, and is checked", "[dist]") {
  unsetenv("DDL_TIMEOUT");
  CHECK(configured_timeout() == kDefaultTimeout);
  CHECK(InitOptions{}.timeout == kDefaultTimeout);
  setenv("DDL_TIMEOUT", "2.5", 1);
  CHECK(configured_timeout() == Millis(2500));
  CHECK(InitOptions{}.timeout == Millis(2500));
  CHECK(GlooOptions{}.timeout == Millis(2500));
  for (const char* bad : {"abc", "0", "-3", "5s", "inf"}) {
    setenv("DDL_TIMEOUT", bad, 1);
    REQUIRE_THROWS_WITH(configured_timeout(),
                        Contains("DDL_TIMEOUT='" + std::string(bad) + "'") && Contains("positive number of seconds"));
  }
  unsetenv("DDL_TIMEOUT");
}

TEST_CASE("timeouts: a rank whose peer never comes stops at its timeout, naming the missing rank", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    ProcessGroupGloo pg(test::store_client(server.port(), Millis(60000)), 1, 2, test::gloo_options(Millis(1500), 0));
    FAIL("connected to nobody");
  } catch (const Error& e) {
    const double s = seconds_since(t0);
    CHECK(s > 1.2);
    CHECK(s < 4);
    CHECK_THAT(e.what(), Contains("[rank 1/2]") && Contains("within 1500 ms") && Contains("rank 0"));
  }
}

TEST_CASE("timeouts: a missing interface is named at once, and the other ranks stop too", "[dist]") {
  test::ParentStoreServer server;
  const int port = server.port();
  // A long timeout: rank 1 must learn of rank 0's failure, not wait it out.
  auto outs = test::run_processes(
      2,
      [&](int rank) {
        GlooOptions o = test::gloo_options(Millis(60000), 0);
        if (rank == 0) o.iface = "nosuchif0";
        const auto t0 = std::chrono::steady_clock::now();
        try {
          ProcessGroupGloo pg(test::store_client(port, Millis(60000)), rank, 2, o);
          DIST_EXPECT(false, "the group was created");
        } catch (const Error& e) {
          const std::string m = e.what();
          DIST_EXPECT(seconds_since(t0) < 10, "took ", seconds_since(t0), " s: ", m);
          DIST_EXPECT(test::contains(m, "'nosuchif0'") && test::contains(m, "does not exist") &&
                          test::contains(m, "lo 127.0.0.1"),
                      "message: ", m);
          if (rank == 0) DIST_EXPECT(!test::contains(m, "60000 ms"), "claims a wait it did not do: ", m);
          if (rank == 1)
            DIST_EXPECT(test::contains(m, "[rank 1/2]") && test::contains(m, "another rank could not start"), m);
        }
      },
      30);
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

namespace {

// Gloo checks the size of every incoming message in its network thread; a bigger message
// than the receiver posted used to end that process with SIGABRT.
void mismatched_sizes(const std::string& op) {
  test::ParentStoreServer server;
  const int port = server.port();
  const std::string dir = test::parent_temp_dir("dir", "/tmp/ddl_timeouts_XXXXXX");
  auto outs = test::run_processes(
      2,
      [&](int rank) {
        // The message goes to stderr just before the process exits: keep it for the parent.
        if (!std::freopen((dir + "/stderr" + std::to_string(rank)).c_str(), "w", stderr)) throw Error("freopen");
        ProcessGroupGloo pg(test::store_client(port, Millis(20000)), rank, 2, test::gloo_options(Millis(20000), 0));
        const int64_t n = rank == 0 ? 100000 : 10;
        if (op == "all_reduce") {
          pg.all_reduce(ones({n}));
        } else if (rank == 0) {
          pg.send(ones({n}), 1, 3);
        } else {
          pg.recv(zeros({n}), 0, 3);
        }
        pg.barrier();  // a send may complete before its receiver fails; the next call cannot
        DIST_EXPECT(false, "mismatched sizes went through");
      },
      40);
  INFO(test::describe(outs));
  int exited = 0;
  for (int r = 0; r < 2; ++r) {
    const std::string err = read_file(dir + "/stderr" + std::to_string(r));
    INFO("rank " << r << " stderr: " << err);
    CHECK(!outs[r].ok);
    CHECK(!test::contains(outs[r].error, "signal"));
    CHECK(outs[r].seconds < 30);
    if (outs[r].error == "exit status 70") {
      ++exited;
      CHECK_THAT(err, Contains("Gloo's network thread failed") && Contains("different operations or sizes") &&
                          Contains(op == "all_reduce" ? "running all_reduce(float32[" : "waiting on recv("));
    } else {
      // The other rank sees its connection to the one that stopped close.
      CHECK_THAT(outs[r].error, Contains("rank " + std::to_string(1 - r)));
    }
  }
  CHECK(exited >= 1);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace

TEST_CASE("timeouts: mismatched sizes over TCP end the processes with a message, not SIGABRT", "[dist]") {
  for (const std::string op : {"all_reduce", "send/recv"}) DYNAMIC_SECTION(op) {
      mismatched_sizes(op);
    }
}
