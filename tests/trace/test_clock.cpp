// dist/trace_merge.h's clock estimate: ranks as threads over one in-memory store, each with
// an injected clock skew (and drift); the estimate must land within its own error bound
// (small: the store is in memory), and the map through two estimates must follow a
// drifting clock. Rank 0 is the reference. Also start_trace's path check.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "tests/common/harness.h"
#include <ddl/dist/store/store.h>
#include <ddl/dist/trace_merge.h>
#include <ddl/trace/clock_map.h>
#include <ddl/trace/trace.h>

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

TEST_CASE("clock offset: a drifting clock is mapped within the bound between two estimates", "[trace]") {
  // Rank 1's clock runs 2 s ahead and gains 1% (1000x a real oscillator's error, so that
  // 100 ms show it clearly). Estimates before and after; times in between map onto rank 0's.
  const int64_t base = trace::now_ns();
  const auto clock1 = [base] {
    const int64_t t = trace::now_ns();
    return t + 2'000'000'000 + (t - base) / 100;
  };
  auto store = std::make_shared<dist::HashStore>(std::chrono::seconds(20));
  dist::ClockEstimate first[2], last[2];
  int64_t probe_local = 0, probe_ref = 0;
  auto outcomes = test::run_threads(2, [&](int rank) {
    const std::function<int64_t()> clock = rank ? std::function<int64_t()>(clock1) : trace::now_ns;
    first[rank] = dist::estimate_clock_offset(*store, rank, 2, 10, clock);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (rank == 1) {
      const int64_t ref = trace::now_ns();
      probe_local = clock1();  // read right after: within a few µs on rank 1's clock
      probe_ref = ref;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    last[rank] = dist::estimate_clock_offset(*store, rank, 2, 10, clock);
  });
  for (auto& o : outcomes) REQUIRE(o.ok);
  const trace::ClockMap m = trace::clock_map(first[1], last[1]);
  INFO("offsets " << first[1].offset_ns << " .. " << last[1].offset_ns << " ns, bounds " << first[1].error_ns << ", "
                  << last[1].error_ns << ", drift " << m.drift * 1e6 << " ppm");
  CHECK(m.estimates == 2);
  CHECK(m.error_ns == std::max(first[1].error_ns, last[1].error_ns));
  const double apart = static_cast<double>(last[1].at_ns - first[1].at_ns);
  const double drift = 0.01 / 1.01;  // offset gained per ns of rank 1's own clock
  CHECK(std::abs(m.drift - drift) * apart <= static_cast<double>(first[1].error_ns + last[1].error_ns) * 1.01 + 2);
  // The probe pair was read a few µs apart: allow that on top of the bound.
  CHECK(std::llabs(m.to_reference(probe_local) - probe_ref) <= m.error_ns + 200'000);
  // A constant offset from the last estimate alone is off by the drift in between (~500 µs).
  const trace::ClockMap flat = trace::clock_map(last[1]);
  CHECK(std::llabs(flat.to_reference(probe_local) - probe_ref) > std::llabs(m.to_reference(probe_local) - probe_ref));
}

TEST_CASE("clock map: exact arithmetic, never decreasing", "[trace]") {
  trace::ClockEstimate a{1000, 10, 0, 1}, b{1000 + 50, 20, 1'000'000, 1};  // +50 ns per ms: 50 ppm
  const trace::ClockMap m = trace::clock_map(a, b);
  CHECK(m.to_reference(0) == -1000);
  CHECK(m.to_reference(1'000'000) == 1'000'000 - 1050);
  CHECK(m.to_reference(500'000) == 500'000 - 1025);
  CHECK(m.error_ns == 20);
  for (int64_t t = 0; t < 100'000; ++t) REQUIRE(m.to_reference(t + 1) >= m.to_reference(t));
  const trace::ClockMap back = trace::clock_map(b, a);  // out of order: the later one alone
  CHECK(back.estimates == 1);
  CHECK(back.to_reference(123) == 123 - 1000);
}

TEST_CASE("start_trace: checks the path without creating it; write_trace writes it", "[trace]") {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "ddl_test_clock_XXXXXX").string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  const std::string path = tmpl + "/t.json";
  dist::start_trace(path);
  CHECK_FALSE(fs::exists(path));  // a run that fails later leaves no empty file
  CHECK(std::distance(fs::directory_iterator(tmpl), fs::directory_iterator()) == 0);  // the probe is gone
  { DDL_TRACE_SPAN("work", "test"); }
  dist::write_trace(path);
  CHECK(fs::file_size(path) > 0);
  CHECK_THROWS_WITH(dist::start_trace(tmpl + "/missing/t.json"), Catch::Contains(tmpl + "/missing/t.json"));
  CHECK_THROWS_WITH(dist::start_trace(tmpl), Catch::Contains("directory"));
  fs::remove_all(tmpl);
}

namespace {
// A group that says it is nccl and fails any collective: the merge must refuse it first.
class NcclOnlyGroup final : public dist::ProcessGroup {
 public:
  NcclOnlyGroup() : ProcessGroup(0, 2) {}
  std::string backend() const override { return "nccl"; }
  std::shared_ptr<dist::Work> all_reduce_async(const Tensor&, dist::ReduceOp) override { return fail(); }
  std::shared_ptr<dist::Work> broadcast_async(const Tensor&, int) override { return fail(); }
  std::shared_ptr<dist::Work> reduce_async(const Tensor&, int, dist::ReduceOp) override { return fail(); }
  std::shared_ptr<dist::Work> all_gather_async(const Tensor&, const Tensor&) override { return fail(); }
  std::shared_ptr<dist::Work> reduce_scatter_async(const Tensor&, const Tensor&, dist::ReduceOp) override {
    return fail();
  }
  std::shared_ptr<dist::Work> gather_async(const Tensor&, const Tensor&, int) override { return fail(); }
  std::shared_ptr<dist::Work> scatter_async(const Tensor&, const Tensor&, int) override { return fail(); }
  std::shared_ptr<dist::Work> all_to_all_async(const Tensor&, const Tensor&) override { return fail(); }
  std::shared_ptr<dist::Work> barrier_async() override { return fail(); }
  std::shared_ptr<dist::Work> send_async(const Tensor&, int, int) override { return fail(); }
  std::shared_ptr<dist::Work> recv_async(const Tensor&, int, int) override { return fail(); }
  dist::CommStats stats() const override { return {}; }
  void reset_stats() override {}
  bool is_broken() const override { return false; }
  std::string broken_reason() const override { return ""; }

 private:
  static std::shared_ptr<dist::Work> fail() { throw std::logic_error("the merge reached a collective"); }
};
}  // namespace

TEST_CASE("write_trace: a pure nccl group is refused before any exchange, naming the fix", "[trace]") {
  NcclOnlyGroup group;
  dist::HashStore store(std::chrono::seconds(1));  // nobody answers: an exchange would time out
  trace::start();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ddl_test_clock_nccl_" + std::to_string(::getpid()) + ".json"))
          .string();
  CHECK_THROWS_WITH(dist::write_trace(path, group, store), Catch::Contains("nccl") && Catch::Contains("auto"));
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("write_trace: rank 0 trusts no size or byte another rank sends", "[trace]") {
  using Catch::Matchers::Contains;
  using dist::detail::check_trace_part;
  using dist::detail::check_trace_sizes;
  CHECK_NOTHROW(check_trace_sizes(3, 100, 20, 0, trace::kDefaultMaxEvents));
  CHECK_NOTHROW(check_trace_sizes(3, 0, 0, 0, trace::kDefaultMaxEvents));
  // A negative count once read past the buffer; 2^40 bytes ran rank 0 out of memory unnamed.
  CHECK_THROWS_WITH(check_trace_sizes(3, -8, 2, 0, trace::kDefaultMaxEvents),
                    Contains("rank 3 announced a trace of -8 + 2 bytes"));
  CHECK_THROWS_WITH(check_trace_sizes(2, int64_t(1) << 40, 10, 0, trace::kDefaultMaxEvents),
                    Contains("rank 2 announced"));
  // The bound follows the cap in force: 1 KiB per event (512 MiB at the default cap).
  CHECK_NOTHROW(check_trace_sizes(2, int64_t(500) << 20, 10, 0, trace::kDefaultMaxEvents));
  CHECK_THROWS_WITH(check_trace_sizes(2, int64_t(600) << 20, 10, 0, trace::kDefaultMaxEvents),
                    Contains("cap of 524288"));
  CHECK_NOTHROW(check_trace_sizes(2, int64_t(600) << 20, 10, 0, 2 * trace::kDefaultMaxEvents));
  CHECK_THROWS_WITH(check_trace_sizes(2, INT64_MAX, INT64_MAX, 0, INT64_MAX), Contains("rank 2 announced"));
  CHECK_THROWS_WITH(check_trace_sizes(1, 1, 1, -1, trace::kDefaultMaxEvents), Contains("-1 dropped events"));

  CHECK_NOTHROW(check_trace_part(1, R"({"ph":"X"},
{"ph":"i","args":{"a":[1,2]}})",
                                 R"({"pid":1})"));
  CHECK_NOTHROW(check_trace_part(1, "", R"({"pid":1})"));
  // Each would make the merged file invalid JSON (spliced after ",\n") yet exit 0.
  for (const char* bad : {"not json", "   ", "{\"a\":1},", "1,2", "[{}]", "{}]", "{},[{}]", "{\"a\":1}\n]}"})
    CHECK_THROWS_WITH(check_trace_part(4, bad, R"({"pid":4})"),
                      Contains("rank 4 sent") && Contains("not a list of JSON objects"));
  // A NUL ends nlohmann's input: '{}]' after it would be spliced unchecked (found by fuzz_trace_merge).
  CHECK_THROWS_WITH(check_trace_part(4, std::string_view("{}]\0{", 5), R"({"pid":4})"), Contains("NUL byte"));
  CHECK_THROWS_WITH(check_trace_part(4, "{}", std::string_view("{}\0x", 4)), Contains("NUL byte"));
  CHECK_THROWS_WITH(check_trace_part(4, "{}", "[1]"), Contains("rank 4 sent process info that is not a JSON object"));
  CHECK_THROWS_WITH(check_trace_part(4, "{}", "{\"pid\":1}, {"), Contains("not a JSON object"));
}
