// MetricsLog: every event is one JSON line that parses back with the common keys, n/a
// values come back as null, append mode keeps earlier lines, and per-rank file names.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <ddl/report/metrics_log.h>

using namespace ddl::report;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<json> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("MetricsLog: events parse back as JSON lines", "[apps]") {
  auto path = fs::temp_directory_path() / ("ddl_metrics_test." + std::to_string(getpid()) + ".jsonl");
  {
    MetricsLog log(path.string(), 1, 2);
    REQUIRE(log.enabled());
    ResourceSample s;
    s.time_s = 1.5;
    s.cpu_percent = 97.5;
    s.rss_bytes = 1000;
    s.disk_read_bytes = -1;  // n/a
    log.sample(s);
    StepTimes t;
    t.phase_s[static_cast<int>(Phase::Forward)] = 0.25;
    t.total_s = 0.5;
    log.step(0, 7, t, {{"loss", 2.5}, {"batch_accuracy", 0.125}});
    EpochTimes e;
    e.steps = 3;
    e.mean = t;
    log.epoch(0, e, {{"train_loss", 1.25}});
    ResourceSummary sum;
    sum.disk_source = DiskSource::Syscalls;
    sum.mean_cpu_percent = std::numeric_limits<double>::quiet_NaN();
    log.summary(sum, {{"final_accuracy", 0.9}});
    log.write("eval", {{"test_loss", std::numeric_limits<double>::quiet_NaN()}, {"name", "T-shirt/top"}});
  }
  auto lines = read_lines(path);
  REQUIRE(lines.size() == 5);
  for (const auto& j : lines) {
    CHECK(j["rank"] == 1);
    CHECK(j["world"] == 2);
    CHECK(j["time_s"].get<double>() >= 0);
    CHECK(j["unix_time_s"].get<double>() > 1.6e9);
  }
  CHECK(lines[0]["event"] == "sample");
  CHECK(lines[0]["cpu_percent"].get<double>() == 97.5);
  CHECK(lines[0]["rss_bytes"] == 1000);
  CHECK(lines[0]["disk_read_bytes"].is_null());
  CHECK(lines[1]["event"] == "step");
  CHECK(lines[1]["step"] == 7);
  CHECK(lines[1]["forward_s"].get<double>() == 0.25);
  CHECK(lines[1]["other_s"].get<double>() == 0.25);
  CHECK(lines[1]["loss"].get<double>() == 2.5);
  CHECK(lines[2]["event"] == "epoch");
  CHECK(lines[2]["steps"] == 3);
  CHECK(lines[2]["mean"]["total_s"].get<double>() == 0.5);
  CHECK(lines[2]["train_loss"].get<double>() == 1.25);
  CHECK(lines[3]["event"] == "summary");
  CHECK(lines[3]["disk_source"] == "rchar/wchar");
  CHECK(lines[3]["mean_cpu_percent"].is_null());
  CHECK(lines[3]["final_accuracy"].get<double>() == 0.9);
  CHECK(lines[4]["test_loss"].is_null());
  CHECK(lines[4]["name"] == "T-shirt/top");

  {
    MetricsLog again(path.string(), 1, 2, /*append=*/true);
    again.write("restart");
  }
  CHECK(read_lines(path).size() == 6);
  { MetricsLog fresh(path.string(), 0, 1); }
  CHECK(read_lines(path).empty());
  fs::remove(path);
}

TEST_CASE("MetricsLog: disabled log, unwritable path, per-rank names", "[apps]") {
  MetricsLog off;
  CHECK_FALSE(off.enabled());
  REQUIRE_NOTHROW(off.write("x"));
  REQUIRE_THROWS_WITH(MetricsLog("/nonexistent-dir/m.jsonl", 0, 1), Catch::Contains("/nonexistent-dir/m.jsonl"));
  CHECK(metrics_path_for_rank("run/m.jsonl", 0, 1) == "run/m.jsonl");
  CHECK(metrics_path_for_rank("run/m.jsonl", 1, 2) == "run/m.rank1.jsonl");
  CHECK(metrics_path_for_rank("run.d/metrics", 3, 4) == "run.d/metrics.rank3");
  CHECK(metrics_path_for_rank(".hidden", 0, 2) == ".hidden.rank0");
}

TEST_CASE("MetricsLog: a write that fails (a full disk) is an error naming the file", "[apps]") {
  MetricsLog full("/dev/full", 0, 1);  // every write fails with ENOSPC
  REQUIRE_THROWS_WITH(full.write("step", {{"loss", 1.0}}),
                      Catch::Contains("/dev/full") && Catch::Contains("No space left on device"));
}
