// DDL_DEBUG's shared check (dist/debug_check.h) with thread ranks over a HashStore: the
// mismatch message's exact text, agreeing calls for world sizes 1-3, mismatched operations,
// sizes and dtypes raising on every rank, and a rank that never arrives named at the
// timeout. The nccl group runs this same exchange before each collective (GPU-only there).
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/base/error.h>
#include <ddl/dist/debug_check.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/store/store.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::dist;
using ddl::test::all_ok;
using ddl::test::contains;
using ddl::test::describe;
namespace dd = ddl::dist::detail;

namespace {

std::shared_ptr<Store> fresh_store() {
  static auto base = std::make_shared<HashStore>(Millis(20000));
  static int n = 0;
  return std::make_shared<PrefixStore>("t" + std::to_string(n++), base);
}

constexpr Millis kTimeout{500};

// Every rank calls the check with its own fingerprint; returns each rank's error ("" = passed).
std::vector<std::string> check_all(int world, int64_t seq, const std::function<std::string(int)>& fingerprint) {
  auto store = fresh_store();
  std::vector<std::string> errors(world);
  auto outs = test::run_threads(world, [&](int rank) {
    try {
      dd::store_debug_check(*store, rank, world, seq, fingerprint(rank), "the call", Millis(20000));
    } catch (const Error& e) {
      errors[rank] = e.what();
      DIST_EXPECT(!errors[rank].empty(), "empty error message");
    }
  });
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
  return errors;
}

}  // namespace

TEST_CASE("DDL_DEBUG: record and mismatch message text", "[dist]") {
  CHECK(dd::debug_record(7, "all_reduce(float32 x 1000, sum)") == "#7 all_reduce(float32 x 1000, sum)");
  CHECK(dd::debug_mismatch_message("[rank 0/2]", {"#0 barrier()", "#0 barrier()"}).empty());
  CHECK(dd::debug_mismatch_message("[rank 0/1]", {"#3 barrier()"}).empty());
  // The exact text gloo has always printed, so both backends report alike.
  CHECK(dd::debug_mismatch_message("[rank 1/2]", {"#4 all_reduce(float32 x 10, sum)", "#4 barrier()"}) ==
        "[rank 1/2] DDL_DEBUG: ranks called different collectives:\n"
        "  rank 0: #4 all_reduce(float32 x 10, sum)\n"
        "  rank 1: #4 barrier()\n"
        "Every rank must call the same collectives, in the same order, with the same sizes and dtypes.");
}

TEST_CASE("DDL_DEBUG: the DDL_DEBUG variable", "[dist]") {
  const char* old = std::getenv("DDL_DEBUG");
  const std::string saved = old ? old : "";
  unsetenv("DDL_DEBUG");
  CHECK_FALSE(dd::debug_from_env());
  setenv("DDL_DEBUG", "0", 1);
  CHECK_FALSE(dd::debug_from_env());
  setenv("DDL_DEBUG", "", 1);
  CHECK_FALSE(dd::debug_from_env());
  setenv("DDL_DEBUG", "1", 1);
  CHECK(dd::debug_from_env());
  if (old)
    setenv("DDL_DEBUG", saved.c_str(), 1);
  else
    unsetenv("DDL_DEBUG");
}

TEST_CASE("DDL_DEBUG: agreeing calls pass through the store", "[dist]") {
  for (int world : {1, 2, 3}) {
    DYNAMIC_SECTION("world " << world) {
      auto store = fresh_store();
      auto outs = test::run_threads(world, [&](int rank) {
        // The exchange hands back every rank's record, in rank order.
        auto all = dd::store_exchange_records(*store, rank, world, 0, "r" + std::to_string(rank), "x", kTimeout);
        DIST_EXPECT(static_cast<int>(all.size()) == world, "got ", all.size(), " records");
        for (int r = 0; r < world; ++r) DIST_EXPECT(all[r] == "r" + std::to_string(r), "record ", r, ": ", all[r]);
        // A sequence of collectives, as a group would check them (seq continues after 0).
        const char* calls[] = {"all_reduce(float32 x 10, sum)", "broadcast(int64 x 3, root=0)", "barrier()",
                               "all_reduce(float32 x 10, sum)"};
        for (int64_t seq = 1; seq <= 4; ++seq)
          dd::store_debug_check(*store, rank, world, seq, calls[seq - 1], "call", kTimeout);
      });
      INFO(describe(outs));
      REQUIRE(all_ok(outs));
    }
  }
}

TEST_CASE("DDL_DEBUG: mismatched calls raise on every rank, naming each rank's call", "[dist]") {
  SECTION("different numel") {
    auto errors = check_all(2, 5, [](int r) { return "all_reduce(float32 x " + std::to_string(10 + r) + ", sum)"; });
    for (int r = 0; r < 2; ++r) {
      INFO(errors[r]);
      CHECK(contains(errors[r], "[rank " + std::to_string(r) + "/2] DDL_DEBUG: ranks called different collectives"));
      CHECK(contains(errors[r], "rank 0: #5 all_reduce(float32 x 10, sum)"));
      CHECK(contains(errors[r], "rank 1: #5 all_reduce(float32 x 11, sum)"));
    }
  }
  SECTION("different operation, one rank of three") {
    auto errors = check_all(
        3, 0, [](int r) { return r == 2 ? "broadcast(float32 x 10, root=0)" : "all_reduce(float32 x 10, sum)"; });
    for (int r = 0; r < 3; ++r) {
      INFO(errors[r]);
      CHECK(contains(errors[r], "rank 0: #0 all_reduce(float32 x 10, sum)"));
      CHECK(contains(errors[r], "rank 1: #0 all_reduce(float32 x 10, sum)"));
      CHECK(contains(errors[r], "rank 2: #0 broadcast(float32 x 10, root=0)"));
      CHECK(contains(errors[r], "Every rank must call the same collectives"));
    }
  }
  SECTION("different dtype") {
    auto errors = check_all(2, 1, [](int r) { return r == 0 ? "all_gather(float32 x 4)" : "all_gather(float64 x 4)"; });
    for (int r = 0; r < 2; ++r) {
      INFO(errors[r]);
      CHECK(contains(errors[r], "rank 0: #1 all_gather(float32 x 4)"));
      CHECK(contains(errors[r], "rank 1: #1 all_gather(float64 x 4)"));
    }
    // Every rank sees the same list; only the "[rank r/N]" prefix differs.
    CHECK(errors[0].substr(errors[0].find(']')) == errors[1].substr(errors[1].find(']')));
  }
}

TEST_CASE("DDL_DEBUG: after a mismatch the next check still pairs up", "[dist]") {
  auto store = fresh_store();
  auto outs = test::run_threads(2, [&](int rank) {
    bool threw = false;
    try {
      dd::store_debug_check(*store, rank, 2, 0, rank == 0 ? "barrier()" : "all_to_all(int32 x 8)", "c", kTimeout);
    } catch (const Error&) {
      threw = true;
    }
    DIST_EXPECT(threw, "no mismatch error on rank ", rank);
    dd::store_debug_check(*store, rank, 2, 1, "barrier()", "barrier()", kTimeout);
  });
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
}

TEST_CASE("DDL_DEBUG: a rank that never arrives is named at the timeout", "[dist]") {
  auto store = fresh_store();
  std::vector<std::string> errors(3);
  std::vector<double> waited(3, 0);
  auto outs = test::run_threads(3, [&](int rank) {
    if (rank == 2) return;  // skips the collective
    auto t0 = std::chrono::steady_clock::now();
    try {
      dd::store_debug_check(*store, rank, 3, 4, "all_reduce(float32 x 10, sum)",
                            "all_reduce(float32[10] on cuda:0, sum)", kTimeout);
    } catch (const Error& e) {
      errors[rank] = e.what();
    }
    waited[rank] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  INFO(describe(outs));
  REQUIRE(all_ok(outs));
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r << ": " << errors[r]);
    const std::string expected = "[rank " + std::to_string(r) +
                                 "/3] DDL_DEBUG: the check before all_reduce(float32[10] on cuda:0, sum) "
                                 "(collective #4) failed";
    CHECK(contains(errors[r], expected));
    CHECK(contains(errors[r], "rank(s) 2 did not reach it within 500 ms"));
    CHECK(waited[r] >= 0.45);
    CHECK(waited[r] < 5.0);
  }
}

TEST_CASE("DDL_DEBUG: a peer that dies is named as dead, not as late", "[dist]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(
      2,
      [&](int rank) {
        GlooOptions o = test::gloo_options(Millis(30000), 0);
        o.debug = 1;
        ProcessGroupGloo pg(test::store_client(port, Millis(30000)), rank, 2, o);
        Tensor t = ones({8});
        pg.all_reduce(t);         // one good round, checked
        if (rank == 1) _exit(3);  // gone before the next check
        const auto t0 = std::chrono::steady_clock::now();
        try {
          pg.all_reduce(t);
          DIST_EXPECT(false, "all_reduce went through without rank 1");
        } catch (const Error& e) {
          const std::string m = e.what();
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          DIST_EXPECT(s < 10, "took ", s, " s (timeout 30 s): ", m);
          DIST_EXPECT(test::contains(m, "DDL_DEBUG") && test::contains(m, "rank 1") && test::contains(m, "exited") &&
                          !test::contains(m, "not every rank reached"),
                      "message: ", m);
        }
      },
      60);
  INFO(test::describe(outs));
  CHECK(outs[0].ok);
  CHECK(!outs[1].ok);
}
