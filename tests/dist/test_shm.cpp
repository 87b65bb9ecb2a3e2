// The shared-memory all-reduce (dist/transport/shm_all_reduce.h) behind ProcessGroupGloo: buffers
// of many pieces against folds computed here in the same rank order (so bit-exact), every
// op and an integer dtype, the byte counters, agreement to fall back to TCP, and the
// same results as Gloo's ring. A peer dying mid-all-reduce is in test_failures.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/dist/dist.h>
#include <ddl/dist/transport/shm_all_reduce.h>
#include <ddl/dist/transport/shm_segment.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/random.h>

using namespace ddl;
using namespace ddl::dist;
using ddl::test::describe;

namespace {

GlooOptions with_shm(int shm) {
  GlooOptions o;
  o.timeout = Millis(30000);
  o.debug = 0;
  o.shm = shm;
  return o;
}

std::shared_ptr<TCPStore> connect(int port) {
  TCPStoreOptions so;
  so.timeout = Millis(30000);
  return std::make_shared<TCPStore>("127.0.0.1", port, so);
}

std::vector<float> input(int rank, int64_t n) {
  Generator g(1000 + rank);
  return to_vector<float>(randn(Shape{n}, g));
}

// The expected result of `op` over every rank's input, folded in rank order.
template <typename F>
std::vector<float> fold(const std::vector<std::vector<float>>& inputs, F f) {
  std::vector<float> acc = inputs[0];
  for (size_t r = 1; r < inputs.size(); ++r)
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = f(acc[i], inputs[r][i]);
  return acc;
}

int64_t first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return int64_t(i);
  return -1;
}

}  // namespace

TEST_CASE("shm all_reduce: many pieces, every op, bit-exact against a rank-order fold", "[dist]") {
  const int64_t n = 3'000'001;  // several pieces; shares that do not divide evenly
  for (int world : {2, 3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(
          world,
          [&](int rank) {
            ProcessGroupGloo pg(connect(port), rank, world, with_shm(1));
            DIST_EXPECT(pg.transport() != "tcp", "shared memory not in use: ", pg.shm_status());
            // Every rank's input, drawn once (under ThreadSanitizer each draw of 3 M normals
            // costs seconds, and the folds below read all of them).
            std::vector<std::vector<float>> inputs;
            for (int r = 0; r < world; ++r) inputs.push_back(input(r, n));
            auto run = [&](ReduceOp op) {
              Tensor t = from_vector<float>(inputs[size_t(rank)], Shape{n});
              pg.all_reduce(t, op);
              return to_vector<float>(t);
            };
            auto sum = fold(inputs, [](float a, float b) { return a + b; });
            int64_t bad = first_difference(run(ReduceOp::Sum), sum);
            DIST_EXPECT(bad < 0, "sum differs at element ", bad);
            std::vector<float> avg = sum;
            for (float& v : avg) v = v / float(world);
            bad = first_difference(run(ReduceOp::Avg), avg);
            DIST_EXPECT(bad < 0, "avg differs at element ", bad);
            bad = first_difference(run(ReduceOp::Max), fold(inputs, [](float a, float b) { return std::max(a, b); }));
            DIST_EXPECT(bad < 0, "max differs at element ", bad);
            bad = first_difference(run(ReduceOp::Min), fold(inputs, [](float a, float b) { return std::min(a, b); }));
            DIST_EXPECT(bad < 0, "min differs at element ", bad);

            // int64, past 2^32, in a non-contiguous view (staged through a copy).
            Tensor big = zeros(Shape{1001, 2}, DType::Int64);
            int64_t* p = big.data<int64_t>();
            for (int64_t i = 0; i < 2002; ++i) p[i] = (int64_t(rank + 1) << 33) + i;
            Tensor column = big.narrow(1, 0, 1);
            pg.all_reduce(column);
            const int64_t ranks = int64_t(world) * (world + 1) / 2;
            for (int64_t i = 0; i < 1001; ++i) {
              DIST_EXPECT(p[2 * i] == (ranks << 33) + world * 2 * i, "int64 element ", i, " is ", p[2 * i]);
              DIST_EXPECT(p[2 * i + 1] == (int64_t(rank + 1) << 33) + 2 * i + 1, "the other column changed");
            }

            // Byte counters: what peers read of ours equals what we read of theirs, and over
            // all ranks 2(n-1) x the buffer moves each way, as for a ring.
            pg.reset_stats();
            pg.all_reduce(zeros(Shape{n}));
            const OpStats s = pg.stats()[OpKind::AllReduce];
            DIST_EXPECT(s.bytes_sent == s.bytes_received, "sent ", s.bytes_sent, " received ", s.bytes_received);
            Tensor all = zeros(Shape{world}, DType::Int64);
            pg.all_gather(all, full(Shape{1}, double(s.bytes_sent), DType::Int64));
            int64_t total = 0;
            for (int64_t v : to_vector<int64_t>(all)) total += v;
            DIST_EXPECT(total == 2 * (world - 1) * n * 4, "total sent ", total);
          },
          120);
      INFO(describe(outs));
      REQUIRE(test::all_ok(outs));
    }
  }
}

// Lines of /proc/self/maps that map a ddl segment (they stay until the group is gone).
static int mapped_segments() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("/ddl-shm-") != std::string::npos;
  return n;
}

TEST_CASE("shm all_reduce: one rank without it makes every rank use TCP", "[dist]") {
  const int before = mapped_segments();
  auto store = std::make_shared<HashStore>(Millis(20000));
  auto outs = test::run_threads(3, [&](int rank) {
    ProcessGroupGloo pg(store, rank, 3, with_shm(rank == 1 ? 0 : 1));
    DIST_EXPECT(pg.transport() == "tcp", "transport ", pg.transport());
    DIST_EXPECT(pg.shm_status().find("rank 1: disabled") != std::string::npos, "status ", pg.shm_status());
    DIST_EXPECT(!pg.shm_failed(), "DDL_SHM=0 is the set-up, not an error: ", pg.shm_status());
    Tensor t = full(Shape{5}, double(rank + 1));
    pg.all_reduce(t);
    DIST_EXPECT(t.data<float>()[4] == 6.0f, "sum over TCP");
  });
  INFO(describe(outs));
  REQUIRE(test::all_ok(outs));
  CHECK(mapped_segments() == before);  // the ranks that had mapped it let go
}

// A rank on another host opens rank 0's name in its own /dev/shm and finds nothing: that is
// the reason it keeps TCP, not a fault; any other failure of shm_open stays an error.
TEST_CASE("shm set-up: a segment absent from this /dev/shm is a reason, other failures are errors", "[dist]") {
  void* base = nullptr;
  bool absent = false;
  const std::string missing = "/ddl-shm-test-absent-" + std::to_string(getpid());
  std::string why = dist::detail::map_segment(missing, 4096, /*create=*/false, &base, &absent);
  CHECK(absent);
  CHECK(base == nullptr);
  CHECK(why.find("ranks on different hosts") != std::string::npos);
  CHECK(why.find("No such file") == std::string::npos);
  absent = false;
  why = dist::detail::map_segment("/ddl/bad/name", 4096, /*create=*/true, &base, &absent);  // EINVAL
  CHECK_FALSE(absent);
  CHECK(why.find("shm_open(/ddl/bad/name)") != std::string::npos);
}

TEST_CASE("shm all_reduce: ranks that disagree on the size fail at once, on every rank", "[dist]") {
  for (int64_t other : {50, 0}) {
    DYNAMIC_SECTION("rank 1 all-reduces " << other << " elements") {
      auto store = std::make_shared<HashStore>(Millis(20000));
      auto outs = test::run_threads(2, [&](int rank) {
        ProcessGroupGloo pg(store, rank, 2, with_shm(1));
        const auto t0 = std::chrono::steady_clock::now();
        try {
          pg.all_reduce(zeros(Shape{rank == 0 ? 100 : other}));
          DIST_EXPECT(false, "no error");
        } catch (const Error& e) {
          const std::string m = e.what();
          DIST_EXPECT(m.find("ranks called different all-reduces") != std::string::npos &&
                          m.find("float32 x 100") != std::string::npos &&
                          m.find("float32 x " + std::to_string(other) + ",") != std::string::npos,
                      "message: ", m);
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        DIST_EXPECT(s < 5, "took ", s, " s (timeout 30 s)");
        DIST_EXPECT(pg.is_broken(), "group not broken");
      });
      INFO(describe(outs));
      REQUIRE(test::all_ok(outs));
    }
  }
}

TEST_CASE("shm all_reduce: a peer that destroys its group ends the wait at once", "[dist]") {
  auto store = std::make_shared<HashStore>(Millis(20000));
  auto outs = test::run_threads(2, [&](int rank) {
    ProcessGroupGloo pg(store, rank, 2, with_shm(1));
    if (rank == 1) return;  // leaves without calling: its process lives on
    const auto t0 = std::chrono::steady_clock::now();
    try {
      pg.all_reduce(zeros(Shape{1000}));
      DIST_EXPECT(false, "no error");
    } catch (const Error& e) {
      DIST_EXPECT(std::string(e.what()).find("rank 1") != std::string::npos, "message: ", e.what());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    DIST_EXPECT(s < 5, "took ", s, " s (timeout 30 s)");
  });
  INFO(describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("shm all_reduce agrees with Gloo's TCP ring", "[dist]") {
  // Different summation orders, so equal to rounding, not bitwise.
  const int64_t n = 1'500'000;
  auto store = std::make_shared<HashStore>(Millis(20000));
  auto outs = test::run_threads(3, [&](int rank) {
    std::vector<std::vector<float>> results;
    for (int shm : {0, 1}) {
      auto prefixed = std::make_shared<PrefixStore>("shm" + std::to_string(shm), store);
      ProcessGroupGloo pg(prefixed, rank, 3, with_shm(shm));
      DIST_EXPECT((pg.transport() != "tcp") == bool(shm), "transport ", pg.transport(), " (", pg.shm_status(), ")");
      Tensor t = from_vector<float>(input(rank, n), Shape{n});
      pg.all_reduce(t);
      results.push_back(to_vector<float>(t));
    }
    for (int64_t i = 0; i < n; ++i)
      DIST_EXPECT(std::abs(results[0][i] - results[1][i]) <= 1e-5f * (1 + std::abs(results[0][i])), "element ", i,
                  ": tcp ", results[0][i], ", shm ", results[1][i]);
  });
  INFO(describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("shm all_reduce: a rank 0 killed right after creating the segment leaves nothing in /dev/shm", "[dist]") {
  // See Note [Segment names] in dist/transport/shm_segment.cpp; the hook is test-only.
  for (int attempt = 0; attempt < 10; ++attempt) {
    INFO("attempt " << attempt);
    test::ParentStoreServer server;
    const int port = server.port();
    auto outs = test::run_processes(
        2,
        [&](int rank) {
          auto store = test::store_client(port, Millis(3000));
          if (rank == 0) {
            store->set("pid0", std::to_string(getpid()));
            setenv("DDL_TEST_SHM_KILL_AFTER_CREATE", "1", 1);
          } else {
            // Rank 1 starts its short set-up timeout once the segment exists, as the real
            // (300 s) one always allows: under sanitizers on a loaded machine rank 0 may take
            // longer than 1.5 s to publish the name or to create the segment, and rank 1 would
            // give up (and unlink nothing) before there is anything to remove.
            const std::string path = "/dev/shm" + store->get("ddl-shm/name", Millis(20000));
            for (int i = 0; i < 2000 && !std::filesystem::exists(path); ++i) std::this_thread::sleep_for(Millis(10));
          }
          std::string why;
          try {
            auto shm = dist::detail::ShmAllReduce::connect(*store, rank, 2, true, Millis(1500), &why);
            DIST_EXPECT(shm == nullptr, "set up without rank 0");
          } catch (const Error&) {  // rank 1: the store wait for rank 0 timed out
          }
        },
        30);
    if (test::is_rank_process()) continue;  // a rank of a later attempt passes through this one
    INFO(describe(outs));
    REQUIRE(outs[0].error == "killed by signal 9");
    REQUIRE(outs[1].ok);
    const std::string prefix = "ddl-shm-" + test::store_client(port, Millis(3000))->get("pid0") + "-";
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator("/dev/shm"))
      if (e.path().filename().string().rfind(prefix, 0) == 0) left.push_back(e.path());
    CHECK(left.empty());
    for (const auto& f : left) std::filesystem::remove(f);  // do not leave them for the next test
  }
}
