// Failure handling: a peer that dies mid-collective (named in the error), a peer that never
// arrives, a send or recv whose partner never comes, rendezvous timeouts, errors carried by
// Work handles, and the broken state afterwards. Every case must end well within the test
// timeout: errors, never hangs.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <thread>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/dist/dist.h>
#include <ddl/dist/store/socket.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::dist;
using ddl::test::describe;

namespace {

using test::contains;

std::shared_ptr<TCPStore> connect(int port, Millis timeout) { return test::store_client(port, timeout); }
GlooOptions with_timeout(Millis t, int shm = 1) { return test::gloo_options(t, shm); }

// The store once all `size` ranks have reached it. Ranks re-execute the test program, which
// under the sanitizers on a loaded machine takes seconds: waiting here first leaves a short
// timeout to bound the group's set-up and the op under test, not the ranks' start.
std::shared_ptr<TCPStore> all_started(int port, int rank, int size) {
  auto store = connect(port, Millis(30000));
  store->set("test_started/" + std::to_string(rank), "1");
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back("test_started/" + std::to_string(r));
  store->wait(keys, Millis(30000));
  return store;
}

}  // namespace

TEST_CASE("failures: a peer dying mid-collective ends every other rank with an error", "[dist]") {
  const int world = 3;
  // Over TCP the survivors see connections close; over shared memory, that the process is gone.
  for (const int shm : {0, 1}) DYNAMIC_SECTION("shm " << shm) {
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(
          world,
          [&](int rank) {
            // A long timeout: the survivors must notice the lost connection, not wait it out.
            ProcessGroupGloo pg(connect(port, Millis(30000)), rank, world, with_timeout(Millis(30000), shm));
            Tensor big = zeros(Shape{16'000'000});
            pg.all_reduce(big);  // one good round first
            if (rank == 2) {
              std::thread([] {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                _exit(3);  // dies without any cleanup, in the middle of the next all_reduce
              }).detach();
            }
            try {
              for (int i = 0; i < 50; ++i) pg.all_reduce(big);
              DIST_EXPECT(false, "all_reduce kept working after rank 2 died");
            } catch (const Error& e) {
              DIST_EXPECT(
                  contains(e.what(), "all_reduce") && contains(e.what(), "[rank " + std::to_string(rank) + "/3]"),
                  "message: ", e.what());
              // The peer is named: the one whose connection broke (Gloo), or that exited or aborted (shm).
              DIST_EXPECT(contains(e.what(), shm ? "shared-memory all-reduce: rank " : "the connection to rank "),
                          "no peer named in: ", e.what());
              connect(port, Millis(5000))->set("message" + std::to_string(rank), e.what());
            }
            DIST_EXPECT(pg.is_broken(), "group not marked broken");
            try {
              pg.barrier();
              DIST_EXPECT(false, "a broken group accepted a barrier");
            } catch (const Error& e) {
              DIST_EXPECT(contains(e.what(), "broken") && contains(e.what(), "barrier"), "message: ", e.what());
            }
          },
          60);
      INFO(describe(outs));
      CHECK(!outs[2].ok);
      CHECK(outs[0].ok);
      CHECK(outs[1].ok);
      CHECK(outs[0].seconds < 20);
      CHECK(outs[1].seconds < 20);
      // The first survivor to notice saw rank 2 go (the other may see that survivor close its
      // connections after its own failure, and name it instead).
      auto store = connect(port, Millis(5000));
      const std::string m0 = store->get("message0"), m1 = store->get("message1");
      INFO("rank 0: " << m0 << "\nrank 1: " << m1);
      const std::string dead = shm ? "rank 2 (pid" : "the connection to rank 2 (";
      CHECK((contains(m0, dead) || contains(m1, dead)));
    }
}

TEST_CASE("failures: a send or recv whose partner never comes times out naming the op and the peer", "[dist]") {
  for (const bool is_send : {true, false}) DYNAMIC_SECTION((is_send ? "send" : "recv")) {
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(
          3,
          [&](int rank) {
            ProcessGroupGloo pg(all_started(port, rank, 3), rank, 3, with_timeout(Millis(1000)));
            if (rank != 0) {
              std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // posts nothing
              return;
            }
            const auto t0 = std::chrono::steady_clock::now();
            try {
              if (is_send)
                pg.send(zeros(Shape{100}), 2, 5);
              else
                pg.recv(zeros(Shape{100}), 2, 5);
              DIST_EXPECT(false, "no timeout");
            } catch (const Error& e) {
              const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              DIST_EXPECT(s > 0.9 && s < 2.4, "timed out after ", s, " s, expected about 1 s");
              const std::string op =
                  is_send ? "send(float32[100], to rank 2, tag=5)" : "recv(float32[100], from rank 2, tag=5)";
              DIST_EXPECT(contains(e.what(), op) && contains(e.what(), "rank 2 stopped answering") &&
                              contains(e.what(), "last heard from rank 2") && contains(e.what(), "1000 ms"),
                          "message: ", e.what());
            }
            DIST_EXPECT(pg.is_broken(), "group not marked broken");
            // Destroying the group after a timed-out send/recv must not touch the freed buffer.
          },
          30);
      INFO(describe(outs));
      REQUIRE(test::all_ok(outs));
    }
}

TEST_CASE("failures: a peer that never arrives times out with the operation named", "[dist]") {
  for (const int shm : {0, 1}) DYNAMIC_SECTION("shm " << shm) {
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(
          2,
          [&](int rank) {
            ProcessGroupGloo pg(all_started(port, rank, 2), rank, 2, with_timeout(Millis(1000), shm));
            if (rank == 1) {
              std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // never calls all_reduce
              return;
            }
            auto t0 = std::chrono::steady_clock::now();
            auto work = pg.all_reduce_async(zeros(Shape{1000}));
            try {
              work->wait();
              DIST_EXPECT(false, "no timeout");
            } catch (const Error& e) {
              double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
              DIST_EXPECT(s > 0.9 && s < 2.4, "timed out after ", s, " s, expected about 1 s");
              DIST_EXPECT(contains(e.what(), "all_reduce(float32[1000], sum)") && contains(e.what(), "1000 ms") &&
                              contains(e.what(), "rank 1"),
                          "message: ", e.what());
            }
            DIST_EXPECT(work->is_completed() && !work->is_success() && work->exception(), "work state");
            DIST_EXPECT(pg.is_broken() && contains(pg.broken_reason(), "all_reduce"), "broken state");
          },
          30);
      INFO(describe(outs));
      REQUIRE(test::all_ok(outs));
    }
}

TEST_CASE("failures: destroy_process_group waits for a rank that never says goodbye only up to the timeout", "[dist]") {
  // Rank 0 serves the store and waits for every rank's goodbye before it leaves; a rank that
  // exits without one kept it waiting a fixed 30 s whatever the job's timeout.
  const int port = std::stoi(test::from_parent("port", [] { return std::to_string(dist::detail::find_free_port()); }));
  auto outs = test::run_processes(
      2,
      [&](int rank) {
        setenv("RANK", std::to_string(rank).c_str(), 1);
        setenv("WORLD_SIZE", "2", 1);
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
        setenv("DDL_JOB_TOKEN", "tok", 1);
        unsetenv("DDL_STORE_SERVED");
        InitOptions opts;
        opts.timeout = Millis(2000);
        init_process_group("gloo", opts);
        default_group().barrier();
        if (rank == 1) return;  // leaves without destroy_process_group
        const auto t0 = std::chrono::steady_clock::now();
        destroy_process_group();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        DIST_EXPECT(s < 6, "destroy_process_group took ", s, " s with a 2 s timeout");
      },
      60);
  INFO(describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("failures: rendezvous without the other ranks times out", "[dist]") {
  auto store = std::make_shared<HashStore>(Millis(500));
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(ProcessGroupGloo(store, 0, 2, with_timeout(Millis(500))),
                      Catch::Contains("could not connect") && Catch::Contains("[rank 0/2]"));
  REQUIRE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}

TEST_CASE("failures: Work::wait with a deadline, then the late peer arrives", "[dist]") {
  auto store = std::make_shared<HashStore>(Millis(10000));
  auto outs = test::run_threads(2, [&](int rank) {
    ProcessGroupGloo pg(store, rank, 2, with_timeout(Millis(10000)));
    Tensor t = full(Shape{4}, double(rank + 1));
    if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(400));
    auto work = pg.all_reduce_async(t);
    if (rank == 0) {
      try {
        work->wait(Millis(50));
        DIST_EXPECT(false, "wait(50 ms) returned before the peer arrived");
      } catch (const Error& e) {
        DIST_EXPECT(contains(e.what(), "Work::wait timed out"), "message: ", e.what());
      }
      DIST_EXPECT(!work->is_completed(), "completed early");
    }
    work->wait();
    DIST_EXPECT(t.data<float>()[0] == 3.0f, "sum");
  });
  INFO(describe(outs));
  REQUIRE(test::all_ok(outs));
}

// See Note [SIGPIPE] in dist/gloo/gloo_abort.h: a write to a dead peer's socket must fail
// with EPIPE (and Gloo's error naming the peer), never end the process by the signal.
TEST_CASE("failures: a Gloo group makes SIGPIPE an error, and keeps a program's own handler", "[dist]") {
  for (const bool own_handler : {false, true}) DYNAMIC_SECTION("own handler " << own_handler) {
      auto outs = test::run_processes(
          1,
          [&](int) {
            // As a fresh program starts (an ignored signal stays ignored across exec, and this
            // test's parent may have made a group already).
            signal(SIGPIPE, own_handler ? [](int) {} : SIG_DFL);
            struct sigaction before {};
            sigaction(SIGPIPE, nullptr, &before);
            ProcessGroupGloo pg(std::make_shared<HashStore>(), 0, 1, with_timeout(Millis(5000)));
            struct sigaction after {};
            sigaction(SIGPIPE, nullptr, &after);
            if (own_handler)
              DIST_EXPECT(after.sa_handler == before.sa_handler, "the program's own SIGPIPE handler was replaced");
            else
              DIST_EXPECT(after.sa_handler == SIG_IGN, "SIGPIPE still ends the process");
            // What it buys: a write to a closed socket now returns EPIPE instead of killing us.
            int fds[2];
            DIST_EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0, "socketpair failed");
            close(fds[1]);
            if (!own_handler)
              DIST_EXPECT(write(fds[0], "x", 1) == -1 && errno == EPIPE, "write did not fail with EPIPE");
            close(fds[0]);
          },
          30);
      INFO(describe(outs));
      REQUIRE(test::all_ok(outs));
    }
}
