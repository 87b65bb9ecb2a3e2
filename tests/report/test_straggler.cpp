// report/straggler.h: the pace vector's wire form (each rank's slot, host names on the
// first exchange, a sum of the slots gives every rank's figures back) and the verdict
// (the busiest rank, compute vs waiting, a link busy against its peers' or slower than them).
#include <catch2/catch.hpp>
#include <cmath>

#include <ddl/report/straggler.h>

using namespace ddl::report;

namespace {
RankPace pace(double step, double compute, double wait, double rx = NAN, double tx = NAN, double cap = NAN) {
  RankPace p;
  p.step_s = p.mean_step_s = step;
  p.data_s = step - compute - wait;
  p.compute_s = compute, p.wait_s = wait;
  p.link_rx_bytes_per_s = rx, p.link_tx_bytes_per_s = tx, p.link_capacity_bytes_per_s = cap;
  return p;
}
// What the all-reduce (sum) of every rank's pack_pace gives each rank.
std::vector<double> summed(const std::vector<RankPace>& ranks, const std::vector<std::string>* hosts) {
  std::vector<double> sum;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const auto v =
        pack_pace(ranks[r], static_cast<int>(r), static_cast<int>(ranks.size()), hosts ? &(*hosts)[r] : nullptr);
    if (sum.empty()) sum.assign(v.size(), 0.0);
    REQUIRE(v.size() == sum.size());
    for (size_t i = 0; i < v.size(); ++i) sum[i] += v[i];
  }
  return sum;
}
}  // namespace

TEST_CASE("pace: each rank fills its own slot; the sum carries every rank's figures and host") {
  const std::vector<RankPace> ranks = {pace(0.2, 0.05, 0.14), pace(0.21, 0.19, 0.01, 5e6, 6e6, 1.25e7),
                                       pace(0.2, 0.06, 0.13)};
  const std::vector<std::string> hosts = {"host0", "node-with-a-long-name.example.org.x", ""};
  std::vector<std::string> got_hosts;
  const auto got = unpack_pace(summed(ranks, &hosts), 3, &got_hosts);
  REQUIRE(got.size() == 3);
  CHECK(got[1].compute_s == 0.19);
  CHECK(got[1].wait_s == 0.01);
  CHECK(got[1].link_tx_bytes_per_s == 6e6);
  CHECK(std::isnan(got[0].link_rx_bytes_per_s));
  CHECK(got_hosts == std::vector<std::string>{"host0", hosts[1].substr(0, kPaceHostChars), ""});
  // Later exchanges carry no names: the hosts are left as they were.
  std::vector<std::string> untouched = {"a", "b", "c"};
  (void)unpack_pace(summed(ranks, nullptr), 3, &untouched);
  CHECK(untouched == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("pace: the slowest rank is the busiest one, and the others' wait is their median") {
  // A CPU-starved rank 2: it computes while the others wait for its gradients.
  const std::vector<RankPace> ranks = {pace(0.5, 0.05, 0.44), pace(0.5, 0.06, 0.42), pace(0.5, 0.45, 0.03),
                                       pace(0.5, 0.05, 0.40)};
  const PaceVerdict v = judge_pace(ranks);
  CHECK(v.slowest == 2);
  CHECK(v.straggler);
  CHECK(v.others_wait_s == Approx(0.42));
  CHECK(v.slow_link == -1);
  const std::vector<std::string> hosts = {"h0", "h1", "h2", "h3"};
  CHECK(pace_status(v, ranks, hosts) == "slowest rank 2 (h2) 0.500 s/step, 90% compute");
  CHECK(pace_sentence(v, ranks, hosts) ==
        "slowest rank 2 (h2): compute 0.450 s, wait 0.030 s per step; the others wait 0.420 s (median)");
  const auto j = pace_json(v, ranks, hosts);
  CHECK(j["slowest_rank"] == 2);
  CHECK(j["slowest_host"] == "h2");
  CHECK(j["ranks"][0]["link_use"].is_null());
  CHECK(judge_pace({ranks[0]}).slowest == -1);  // alone: nobody to be slower than
  // Everyone waits on the network: one is the busiest, but it holds nobody up.
  const std::vector<RankPace> even = {pace(0.8, 0.02, 0.77), pace(0.8, 0.04, 0.75), pace(0.8, 0.02, 0.77)};
  const PaceVerdict e = judge_pace(even);
  CHECK(e.slowest == 1);
  CHECK_FALSE(e.straggler);
  CHECK(pace_status(e, even, {}) == "no straggler, busiest rank 1 0.800 s/step, 5% compute");
  CHECK(pace_json(e, even, {})["straggler"] == false);
  // Busy but not by much more than the others: not a straggler either.
  CHECK_FALSE(judge_pace({pace(0.5, 0.3, 0.19), pace(0.5, 0.25, 0.24), pace(0.5, 0.25, 0.24)}).straggler);
}

TEST_CASE("pace: a link far busier than its peers' is flagged, by capacity when known") {
  // Every rank moves the same bytes (a ring), but host 1's link has a tenth of the capacity.
  std::vector<RankPace> ranks = {pace(0.8, 0.02, 0.78, 11e6, 11e6, 125e6), pace(0.8, 0.02, 0.78, 11e6, 11e6, 12.5e6),
                                 pace(0.8, 0.02, 0.78, 11e6, 11e6, 125e6)};
  PaceVerdict v = judge_pace(ranks);
  CHECK(v.by_capacity);
  CHECK(v.slow_link == 1);
  CHECK(v.link_figure == Approx(0.88));
  CHECK(v.peers_figure == Approx(0.088));
  CHECK(pace_status(v, ranks, {}).find("slow link rank 1 88% busy") != std::string::npos);
  // Equal links equally busy: nothing stands out, however busy.
  ranks[1].link_capacity_bytes_per_s = 125e6;
  CHECK(judge_pace(ranks).slow_link == -1);
  ranks[0].link_capacity_bytes_per_s = ranks[1].link_capacity_bytes_per_s = ranks[2].link_capacity_bytes_per_s = 12e6;
  CHECK(judge_pace(ranks).slow_link == -1);
  // Capacity unknown: a rank carrying under half its peers' median bytes per second.
  ranks = {pace(1, 0.1, 0.9, 4e6, 4e6), pace(1, 0.1, 0.9, 1e6, 0.5e6), pace(1, 0.1, 0.9, 3e6, 5e6)};
  v = judge_pace(ranks);
  CHECK_FALSE(v.by_capacity);
  CHECK(v.slow_link == 1);
  CHECK(v.peers_figure == Approx(8e6));
  ranks[1].link_rx_bytes_per_s = 3e6, ranks[1].link_tx_bytes_per_s = 3e6;
  CHECK(judge_pace(ranks).slow_link == -1);
}

TEST_CASE("pace: the window's means, and link rates from the second reading on") {
  PaceWindow w;
  (void)w.take(NAN, 1000, 2000, 0, 100);  // the first reading: no rate yet
  StepTimes a, b;
  a.total_s = 1.0, a.phase_s = {0.1, 0.2, 0.3, 0.3, 0.1};
  b.total_s = 3.0, b.phase_s = {0.1, 0.4, 0.5, 1.9, 0.1};
  w.add_step(a);
  w.add_step(b);
  const RankPace p = w.take(3.0, 3000, 2500, 2.0, 100);
  CHECK(p.mean_step_s == Approx(2.0));
  CHECK(p.compute_s == Approx(0.8));
  CHECK(p.wait_s == Approx(1.1));
  CHECK(p.data_s == Approx(0.1));
  CHECK(p.link_rx_bytes_per_s == Approx(1000));
  CHECK(p.link_tx_bytes_per_s == Approx(250));
  CHECK(p.link_use() == Approx(10));
  const RankPace empty = w.take(1.0, -1, -1, 1.0, NAN);  // no step, no counters
  CHECK(std::isnan(empty.mean_step_s));
  CHECK(std::isnan(empty.link_use()));
}
