// dist/trace_merge.h's clock estimate: ranks as threads over one in-memory store, each with
// an injected clock skew; the estimate must land within its own error bound of the skew
// (and the bound must be small: the store is in memory). Rank 0 is the reference.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "../common/harness.h"
#include "dist/store/store.h"
#include "dist/trace_merge.h"
#include "trace/trace.h"

using namespace ddl;

TEST_CASE("clock offset: recovers injected skews within its error bound", "[trace]") {
  const int world = 3;
  const int64_t skew_ns[world] = {0, 5'000'000'000, -1'234'567'000};  // +5 s, -1.23 s
  auto store = std::make_shared<dist::HashStore>(std::chrono::seconds(20));
  std::vector<dist::ClockEstimate> est(world);
  auto outcomes = test::run_threads(world, [&](int rank) {
    est[rank] =
        dist::estimate_clock_offset(*store, rank, world, 10, [&, rank] { return trace::now_ns() + skew_ns[rank]; });
  });
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r << ": " << outcomes[r].error);
    REQUIRE(outcomes[r].ok);
    INFO("offset " << est[r].offset_ns << " ns, error bound " << est[r].error_ns << " ns, skew " << skew_ns[r]);
    CHECK(std::llabs(est[r].offset_ns - skew_ns[r]) <= est[r].error_ns);
    CHECK(est[r].error_ns < 20'000'000);  // 20 ms: generous for a loaded 2-core machine
    CHECK(est[r].rounds == 10);
  }
  CHECK(est[0].offset_ns == 0);
  CHECK(est[0].error_ns == 0);
}

TEST_CASE("clock offset: a second call uses fresh keys", "[trace]") {
  auto store = std::make_shared<dist::HashStore>(std::chrono::seconds(20));
  for (int call = 0; call < 2; ++call) {
    auto outcomes = test::run_threads(2, [&](int rank) {
      auto e = dist::estimate_clock_offset(*store, rank, 2, 3, [rank] { return trace::now_ns() + rank * 1'000'000; });
      DIST_EXPECT(std::llabs(e.offset_ns - rank * 1'000'000) <= e.error_ns, "offset ", e.offset_ns);
    });
    for (auto& o : outcomes) CHECK(o.ok);
  }
}

TEST_CASE("clock offset: rounds below 1 are an error", "[trace]") {
  dist::HashStore store;
  CHECK_THROWS_WITH(dist::estimate_clock_offset(store, 0, 2, 0), Catch::Contains("rounds"));
}
