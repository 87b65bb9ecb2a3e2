// Collectives on the Gloo backend: closed-form results for world sizes 1 to 4, as
// threads sharing a HashStore and as forked processes over a TCPStore; rendezvous through
// a FileStore; init_process_group from the environment and from file://; byte counters;
// argument errors; DDL_DEBUG mismatch reports.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "tests/common/collective_checks.h"
#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/dist/dist.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/traffic.h>

using namespace ddl;
using namespace ddl::dist;
using ddl::test::all_ok;
using ddl::test::describe;

namespace {

std::shared_ptr<Store> fresh_store() {
  static auto base = std::make_shared<HashStore>(Millis(20000));
  static int n = 0;
  return std::make_shared<PrefixStore>("t" + std::to_string(n++), base);
}

// shm = 1: all_reduce through shared memory (these ranks share a host); 0: Gloo's TCP ring.
GlooOptions quick(int debug = 0, int shm = 1) {
  GlooOptions o;
  o.timeout = Millis(20000);
  o.debug = debug;
  o.shm = shm;
  return o;
}

}  // namespace

TEST_CASE("collectives: closed forms with thread ranks", "[dist]") {
  for (int world : {1, 2, 3, 4}) {
    for (const auto& mode : {std::pair{0, 0}, {0, 1}, {1, 1}}) {
      const int debug = mode.first, shm = mode.second;  // not a structured binding: lambdas capture them
      DYNAMIC_SECTION("world " << world << " debug " << debug << " shm " << shm) {
        auto store = fresh_store();
        auto outs = test::run_threads(world, [&](int rank) {
          ProcessGroupGloo pg(store, rank, world, quick(debug, shm));
          DIST_EXPECT((pg.transport() != "tcp") == (shm && world > 1), "transport ", pg.transport(), " (",
                      pg.shm_status(), ")");
          test::check_all_collectives(pg);
        });
        INFO(describe(outs));
        REQUIRE(all_ok(outs));
      }
    }
  }
}

TEST_CASE("collectives: closed forms with process ranks over TCPStore", "[dist]") {
  for (int world : {2, 3, 4})
    for (int shm : {0, 1}) {
      DYNAMIC_SECTION("world " << world << " shm " << shm) {
        // The parent serves the store, as ddlrun does; the ranks are real processes.
        test::ParentStoreServer server;
        const int port = server.port();
        auto outs = test::run_processes(world, [&](int rank) {
          TCPStoreOptions so;
          so.timeout = Millis(20000);
          auto store = std::make_shared<TCPStore>("127.0.0.1", port, so);
          ProcessGroupGloo pg(store, rank, world, quick(0, shm));
          DIST_EXPECT((pg.transport() != "tcp") == bool(shm), "transport ", pg.transport(), " (", pg.shm_status(), ")");
          test::check_all_collectives(pg);
        });
        INFO(describe(outs));
        REQUIRE(all_ok(outs));
      }
    }
}

TEST_CASE("init_process_group: env contract, rank 0 serves the store", "[dist]") {
  const int world = 3;
  const int port = std::stoi(test::from_parent("port", [] { return std::to_string(dist::detail::find_free_port()); }));
  auto outs = test::run_processes(world, [&](int rank) {
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    setenv("DDL_JOB_TOKEN", "tok", 1);
    unsetenv("DDL_STORE_SERVED");
    DIST_EXPECT(!is_initialized() && get_rank() == 0 && get_world_size() == 1, "before init");
    InitOptions opts;
    opts.timeout = Millis(20000);
    init_process_group("gloo", opts);
    DIST_EXPECT(is_initialized() && get_rank() == rank && get_world_size() == world, "after init");
    Tensor t = full(Shape{10}, double(rank));
    default_group().all_reduce(t);
    test::expect_values<float>(
        t, [](int64_t) { return 3; }, "all_reduce of ranks");
    destroy_process_group();
    DIST_EXPECT(!is_initialized(), "after destroy");
  });
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
}

TEST_CASE("FileStore rendezvous: forked ranks, directly and through init_process_group file://", "[dist]") {
  const std::string dir = test::parent_temp_dir("dir", "/tmp/ddl_filestore_pg_XXXXXX");
  const int world = 3;
  auto outs = test::run_processes(world, [&](int rank) {
    {
      // A group over the store directly, on Gloo's TCP ring.
      auto store = std::make_shared<FileStore>(dir + "/direct", Millis(20000));
      ProcessGroupGloo pg(std::make_shared<PrefixStore>("g", store), rank, world, quick(0, 0));
      Tensor t = test::make<float>(100, [&](int64_t i) { return (rank + 1) * (i + 1); });
      pg.all_reduce(t);
      test::expect_values<float>(
          t, [](int64_t i) { return 6 * (i + 1); }, "all_reduce over a FileStore group");
      pg.barrier();
    }
    // The same through init_process_group: no MASTER_ADDR/MASTER_PORT, only the directory.
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
    for (const char* v : {"MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "DDL_STORE_SERVED",
                          "DDL_JOB_TOKEN", "DDL_GLOO_IFACE", "GLOO_SOCKET_IFNAME"})
      unsetenv(v);
    InitOptions opts;
    opts.init_method = "file://" + dir + "/init";
    opts.timeout = Millis(20000);
    init_process_group("gloo", opts);
    DIST_EXPECT(get_rank() == rank && get_world_size() == world, "rank ", get_rank(), " of ", get_world_size());
    Tensor t = test::make<double>(7, [&](int64_t i) { return rank * 10 + i; });
    default_group().all_reduce(t);
    test::expect_values<double>(
        t, [](int64_t i) { return 30 + 3 * i; }, "all_reduce after init_process_group(file://)");
    destroy_process_group();
  });
  INFO(describe(outs));
  CHECK(all_ok(outs));
  // Both rendezvous went through files in their directories (key files are named k_<hex>).
  for (const char* sub : {"/direct", "/init"}) {
    int keys = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir + sub))
      keys += e.path().filename().string().rfind("k_", 0) == 0;
    CHECK(keys >= world);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("init_process_group: nccl and unknown backends fail clearly", "[dist]") {
  InitOptions opts;
  opts.store = std::make_shared<HashStore>();
  opts.rank = 0;
  opts.world_size = 1;
  REQUIRE_THROWS_WITH(init_process_group("nccl", opts), Catch::Contains("nccl") && Catch::Contains("CUDA"));
  REQUIRE_THROWS_WITH(init_process_group("mpi", opts), Catch::Contains("unknown backend 'mpi'"));
  REQUIRE_THROWS_WITH(default_group(), Catch::Contains("init_process_group"));
  init_process_group("gloo", opts);  // a world of one needs no peers
  Tensor t = full(Shape{3}, 2.0);
  default_group().all_reduce(t, ReduceOp::Avg);
  REQUIRE(t.data<float>()[0] == 2.0f);
  destroy_process_group();
}

TEST_CASE("byte counters follow the ring schedule", "[dist]") {
  const int world = 3;
  auto store = fresh_store();
  std::vector<CommStats> stats(world);
  auto outs = test::run_threads(world, [&](int rank) {
    ProcessGroupGloo pg(store, rank, world, quick(0, 0));  // Gloo's ring (shm: see below)
    pg.all_reduce(zeros(Shape{3000}));                     // 12 000 bytes
    pg.all_gather(zeros(Shape{3 * 10}), zeros(Shape{10}));
    pg.broadcast(zeros(Shape{100}), 0);
    pg.reduce_scatter(zeros(Shape{5}), zeros(Shape{15}));
    Tensor t = zeros(Shape{8});
    if (rank == 0) pg.send(t, 1);
    if (rank == 1) pg.recv(t, 0);
    stats[rank] = pg.stats();
    pg.reset_stats();
    DIST_EXPECT(pg.stats().bytes_sent() == 0, "reset_stats");
  });
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
  for (int r = 0; r < world; ++r) {
    const CommStats& s = stats[r];
    // Ring all-reduce sends and receives 2(n-1)/n of the buffer.
    CHECK(s[OpKind::AllReduce].calls == 1);
    CHECK(s[OpKind::AllReduce].bytes_sent == 2 * 2 * 12000 / 3);
    CHECK(s[OpKind::AllReduce].bytes_received == 2 * 2 * 12000 / 3);
    CHECK(s[OpKind::AllGather].bytes_sent == 2 * 40);
    CHECK(s[OpKind::ReduceScatter].bytes_sent == 2 * 20);
    CHECK(s[OpKind::Send].bytes_sent == (r == 0 ? 32 : 0));
    CHECK(s[OpKind::Recv].bytes_received == (r == 1 ? 32 : 0));
  }
  // Binomial tree from rank 0 over 3 ranks: 0 → 1, then 0 → 2.
  CHECK(stats[0][OpKind::Broadcast].bytes_sent == 800);
  CHECK(stats[1][OpKind::Broadcast].bytes_received == 400);
  CHECK(stats[2][OpKind::Broadcast].bytes_received == 400);
  CHECK(stats[0].summary().find("all_reduce: 1 calls") != std::string::npos);
}

TEST_CASE("collectives: argument errors name the operation", "[dist]") {
  auto store = fresh_store();
  auto outs = test::run_threads(2, [&](int rank) {
    ProcessGroupGloo pg(store, rank, 2, quick());
    auto expect_throw = [](auto fn, const std::string& needle) {
      try {
        fn();
      } catch (const Error& e) {
        DIST_EXPECT(std::string(e.what()).find(needle) != std::string::npos, "message '", e.what(), "' lacks '", needle,
                    "'");
        return;
      }
      DIST_EXPECT(false, "no error for ", needle);
    };
    expect_throw([&] { pg.all_gather(zeros(Shape{5}), zeros(Shape{3})); }, "all_gather: output");
    expect_throw([&] { pg.all_reduce(zeros(Shape{2}, DType::Int64), ReduceOp::Avg); }, "Avg");
    expect_throw([&] { pg.broadcast(zeros(Shape{2}), 2); }, "broadcast: root 2");
    expect_throw([&] { pg.send(zeros(Shape{2}), rank); }, "send: peer rank");
    expect_throw([&] { pg.all_reduce(Tensor()); }, "all_reduce: the tensor is undefined");
    expect_throw([&] { pg.reduce_scatter(zeros(Shape{2}), zeros(Shape{5})); }, "reduce_scatter");
    pg.barrier();  // the group is still usable: argument errors are not transport failures
  });
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
}

TEST_CASE("DDL_DEBUG: mismatched collectives raise on every rank", "[dist]") {
  auto store = fresh_store();
  setenv("DDL_DEBUG", "1", 1);
  auto outs = test::run_threads(2, [&](int rank) {
    ProcessGroupGloo pg(store, rank, 2, quick(-1));  // -1: from DDL_DEBUG
    DIST_EXPECT(pg.debug_checks(), "DDL_DEBUG=1 was not picked up");
    pg.all_reduce(zeros(Shape{4}));  // agreeing calls pass
    // Different operations.
    try {
      if (rank == 0)
        pg.all_reduce(zeros(Shape{10}));
      else
        pg.broadcast(zeros(Shape{10}), 0);
      DIST_EXPECT(false, "no mismatch error");
    } catch (const Error& e) {
      std::string m = e.what();
      DIST_EXPECT(m.find("rank 0: #") != std::string::npos &&
                      m.find("all_reduce(float32 x 10, sum)") != std::string::npos &&
                      m.find("rank 1: #") != std::string::npos &&
                      m.find("broadcast(float32 x 10, root=0)") != std::string::npos,
                  "message: ", m);
    }
    // Same operation, different sizes / dtypes.
    try {
      pg.all_reduce(rank == 0 ? zeros(Shape{10}) : zeros(Shape{11}, DType::Float64));
      DIST_EXPECT(false, "no mismatch error");
    } catch (const Error& e) {
      std::string m = e.what();
      DIST_EXPECT(m.find("float32 x 10") != std::string::npos && m.find("float64 x 11") != std::string::npos,
                  "message: ", m);
    }
    // Mismatches are reported, not fatal: the group still works.
    DIST_EXPECT(!pg.is_broken(), "broken after a debug mismatch");
    Tensor t = full(Shape{3}, 1.0);
    pg.all_reduce(t);
    DIST_EXPECT(t.data<float>()[0] == 2.0f, "all_reduce after a mismatch");
    DIST_EXPECT(pg.stats()[OpKind::DebugCheck].calls == 4, "debug checks counted");
  });
  unsetenv("DDL_DEBUG");
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
}

TEST_CASE("byte counters: Gloo's ring all-reduce of a many-segment buffer") {
  // VGG-11's gradient: 37 MB, many 1 MiB segments per rank. Each ring phase
  // moves every chunk n-1 times, so over all ranks 2(n-1) x bytes go each way;
  // with 2 ranks each sends and receives exactly the buffer once. (A replay
  // that let every segment iteration send counted nearly twice that.)
  const size_t bytes = 9231114 * 4;
  for (int n : {2, 3, 4}) {
    int64_t sent = 0, received = 0;
    for (int r = 0; r < n; ++r) {
      const dist::detail::Traffic t = dist::detail::ring_allreduce_traffic(bytes, 4, n, r);
      if (n == 2) {
        CHECK(t.sent == int64_t(bytes));
        CHECK(t.received == int64_t(bytes));
      }
      sent += t.sent, received += t.received;
    }
    CHECK(sent == 2 * (n - 1) * int64_t(bytes));
    CHECK(received == 2 * (n - 1) * int64_t(bytes));
  }
}
