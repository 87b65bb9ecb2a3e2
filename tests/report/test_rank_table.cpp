// The per-rank table: world 1 without a group prints every column (n/a where unknown);
// two thread ranks over Gloo gather each other's summaries (only rank 0 prints) and sum
// a confusion matrix; the convergence tracker keeps the first time at the target.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "tests/common/harness.h"
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/store/store.h>
#include <ddl/report/classification_report.h>
#include <ddl/report/rank_table.h>

using namespace ddl;
using namespace ddl::report;

namespace {

const char* kHeaders[] = {"rank",          "cpu %",     "peak rss MB", "pg sent MB",  "pg recv MB",
                          "net rx MB",     "net tx MB", "lo rx MB",    "lo tx MB",    "disk read MB",
                          "disk write MB", "data ms",   "forward ms",  "backward ms", "comm wait ms",
                          "optimizer ms",  "step ms",   "wall s",      "converged s", "final acc %"};

}  // namespace

TEST_CASE("rank table: world 1 without a group prints every column", "[apps]") {
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  ResourceSampler sampler(opts);
  StepTimer timer;
  for (int i = 0; i < 3; ++i) {
    timer.start(Phase::Forward);
    timer.start(Phase::Optimizer);
    timer.end_step();
  }
  dist::CommStats comm;
  comm[dist::OpKind::AllReduce].bytes_sent = 3'000'000;
  comm[dist::OpKind::AllReduce].bytes_received = 1'500'000;
  RankSummary mine = make_rank_summary(sampler.summary(), timer.run(), &comm, std::nan(""), 91.37, 12.5);
  CHECK(mine[RankField::PgSentMB] == Approx(3.0));
  CHECK(mine[RankField::FinalAccuracyPct] == Approx(91.37));

  std::ostringstream os;
  print_rank_table(mine, nullptr, os);
  std::string text = os.str();
  INFO(text);
  for (const char* h : kHeaders) CHECK_THAT(text, Catch::Contains(h));
  CHECK_THAT(text, Catch::Contains("3.00"));        // pg sent
  CHECK_THAT(text, Catch::Contains("91.37"));       // final accuracy, in %
  CHECK_THAT(text, Catch::Contains("n/a"));         // no convergence time
  CHECK(text.find("\nmean") == std::string::npos);  // no mean row for one rank
  // Columns line up: each table's header, rule and row have the same length.
  std::istringstream lines(text);
  std::string header, rule, row;
  std::getline(lines, header);  // title
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, row);
  CHECK(header.size() == rule.size());
  CHECK(row.size() == header.size());

  // No group and no step: everything but what the sampler saw is n/a, and nothing throws.
  RankSummary blank = make_rank_summary(ResourceSummary{}, EpochTimes{}, nullptr, std::nan(""), std::nan(""), 0);
  CHECK(std::isnan(blank[RankField::StepMs]));
  CHECK_THAT(format_rank_table({blank}), Catch::Contains("n/a"));
}

TEST_CASE("rank table: two ranks gather to rank 0, confusion matrices sum", "[apps][dist]") {
  auto store = std::make_shared<dist::HashStore>(dist::Millis(20000));
  std::string printed[2];
  auto outs = test::run_threads(2, [&](int rank) {
    dist::GlooOptions o;
    o.timeout = dist::Millis(20000);
    o.debug = 0;
    dist::ProcessGroupGloo pg(store, rank, 2, o);
    RankSummary mine;
    mine[RankField::MeanCpuPercent] = 10.0 * (rank + 1);
    mine[RankField::StepMs] = 100.0 + rank;
    auto all = gather_rank_summaries(mine, &pg);
    DIST_EXPECT(all.size() == 2, "got ", all.size());
    DIST_EXPECT(all[1][RankField::StepMs] == 101.0, "rank 1's step time");
    DIST_EXPECT(std::isnan(all[0][RankField::DiskReadMB]), "n/a travels as NaN");
    std::ostringstream os;
    print_rank_table(mine, &pg, os);
    printed[rank] = os.str();

    ConfusionMatrix cm(2);
    cm.add(rank, 0);  // rank 0: (0, 0); rank 1: predicted 1 for class 0
    cm.all_reduce(&pg);
    DIST_EXPECT(cm.count(0, 0) == 1 && cm.count(0, 1) == 1 && cm.total() == 2, "summed matrix");
  });
  REQUIRE(test::all_ok(outs));
  INFO(printed[0]);
  CHECK(printed[1].empty());
  CHECK_THAT(printed[0], Catch::Contains("mean"));
  CHECK_THAT(printed[0], Catch::Contains("20.0"));    // rank 1's CPU %
  CHECK_THAT(printed[0], Catch::Contains("15.0"));    // the mean CPU %
  CHECK_THAT(printed[0], Catch::Contains("101.00"));  // rank 1's step time
}

TEST_CASE("ConvergenceTracker: first time at or above the target", "[apps]") {
  ConvergenceTracker t(90);  // percent, as every accuracy in the API
  t.record(10, 50);
  t.record(15, 0.95);  // a fraction would be far below the target
  CHECK(std::isnan(t.time_s()));
  t.record(20, 90);
  t.record(30, 95);
  CHECK(t.time_s() == 20);
  ConvergenceTracker none;
  none.record(5, 100);
  CHECK(std::isnan(none.time_s()));
}
