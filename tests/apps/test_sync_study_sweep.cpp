// sync_study's sweep parts without a network: --links parsing (RATE[/DELAY[/LOSS]],
// comma-separated), the link columns of a row (busiest link per step without the start-up
// broadcast, link use against rate × comm wait), the parameter count from a worker's
// header, and the files write_study / write_sweep / write_sweep_html produce for two settings.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/sync_study/link_setting.h"
#include "apps/sync_study/study_html.h"
#include "apps/sync_study/study_sweep.h"
#include "tensor/error.h"

using namespace ddl::apps;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

StudyRow row(const std::string& strategy, double step_ms, double comm_ms) {
  StudyRow r;
  r.strategy = strategy;
  r.step_ms = step_ms;
  r.comm_ms = comm_ms;
  r.steps = 10;
  return r;
}

}  // namespace

TEST_CASE("sync_study --links: rates, delays and losses, comma-separated", "[apps]") {
  const auto links = parse_links("10mbit,100mbit/20ms,1gbit/5ms/1%,500kbit");
  REQUIRE(links.size() == 4);
  CHECK(links[0].ddlrun_arg == "10mbit");
  CHECK(links[0].label == "10mbit");
  CHECK(links[0].rate_bits == 1e7);
  CHECK(links[1].spec == "100mbit/20ms");
  CHECK(links[1].ddlrun_arg == "100mbit,20ms");
  CHECK(links[1].label == "100mbit-20ms");
  CHECK(links[2].ddlrun_arg == "1gbit,5ms,1%");
  CHECK(links[2].label == "1gbit-5ms-1pct");
  CHECK(links[2].rate_bits == 1e9);
  CHECK(links[3].rate_bits == 5e5);
  for (const char* bad : {"", "10mbit,", "10mbps", "mbit", "10mbit/1ms/1%/x", "10mbit,10mbit", "10mbit/$(x)", "1gbit//",
                          "1kbit", "99999999999gbit"})
    CHECK_THROWS_AS(parse_links(bad), ddl::Error);
}

TEST_CASE("sync_study: link columns from the ranks' received bytes", "[apps]") {
  // A 3-rank ring of P parameters over 10 steps: every rank receives 2(n-1)/n · 4P per
  // step, and ranks 1 and 2 also 4P in the start-up broadcast.
  const int64_t P = 1000000;
  const double S = 4.0 * P, per_step = 2.0 * 2 / 3 * S;
  StudyRow r = row("ring", 110, 100);
  r.received_bytes = {10 * per_step, 10 * per_step + S, 10 * per_step + S};
  link_columns(r, P, 1e9);  // 125 MB/s: 100 ms carries 12.5 MB
  CHECK(r.busiest_mb_per_step == Approx(per_step / 1e6));
  CHECK(r.link_use == Approx(per_step / 12.5e6));
  // A hub that received (n-1)·S per step: the busiest is rank 0, with no start-up bytes.
  StudyRow hub = row("param-server", 300, 300);
  hub.received_bytes = {10 * 2 * S, 10 * 0.1 * S + S, S};
  link_columns(hub, P, 1e9);
  CHECK(hub.busiest_mb_per_step == Approx(2 * S / 1e6));
}

TEST_CASE("sync_study: the parameter count from a worker's header", "[apps]") {
  const fs::path log = fs::temp_directory_path() / "ddl_test_sync_study_header.log";
  std::ofstream(log) << "ddlrun: job x\n[rank 1/2] model mlp (658698 parameters), dataset synthetic\n";
  CHECK(params_from_log(log.string()) == 658698);
  std::ofstream(log) << "nothing here\n";
  CHECK(params_from_log(log.string()) == 0);
  fs::remove(log);
}

TEST_CASE("sync_study: a table per setting and the summary across them", "[apps]") {
  const fs::path dir = fs::temp_directory_path() / "ddl_test_sync_study_sweep";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<SweepSetting> sweep;
  for (const auto& link : parse_links("10mbit,1gbit")) {
    const double scale = link.rate_bits == 1e7 ? 100 : 1;
    SweepSetting s{link, {row("ring", 10 * scale, 9 * scale), row("local-sgd:4", 4 * scale, 3 * scale)}};
    s.rows[1].test_accuracy_pct = 50;
    s.rows[0].test_accuracy_pct = 60;
    write_study(dir.string(), s.rows, 2, "synthetic", "mlp", "Over emulated links.", "study-" + link.label, link.spec);
    sweep.push_back(s);
  }
  write_sweep(dir.string(), sweep, 2, "synthetic", "mlp");
  for (const char* f : {"study-10mbit.md", "study-10mbit.csv", "study-1gbit.md", "study-1gbit.csv", "study-sweep.md"})
    CHECK(fs::exists(dir / f));
  const std::string csv = slurp(dir / "study-sweep.csv");
  CHECK(csv.rfind("link,link_bits_per_s,strategy,step_ms,comm_wait_ms,", 0) == 0);
  CHECK(csv.find("\n10mbit,10000000,ring,1000,900,") != std::string::npos);
  CHECK(csv.find("\n1gbit,1000000000,local-sgd:4,4,3,") != std::string::npos);
  const std::string per = slurp(dir / "study-10mbit.csv");
  CHECK(per.find(",link,link_sent_mb_per_host,") != std::string::npos);
  const std::string md = slurp(dir / "study-sweep.md");
  CHECK(md.find("| ms / iteration | 10mbit | 1gbit |") != std::string::npos);
  CHECK(md.find("| ring | 1000.0 | 10.0 |") != std::string::npos);
  CHECK(md.find("- at 10mbit: local-sgd:4 was fastest (400.0 ms per iteration, 50.00% test accuracy); of the exact "
                "strategies, ring (1000.0 ms, 60.00%).") != std::string::npos);

  // study.html: lines over the link rate (one per strategy, a point per setting), then
  // each setting's bars, whose values are the rows' own.
  write_sweep_html(dir.string(), sweep, "sweep");
  const std::string html = slurp(dir / "study.html");
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
    return n;
  };
  for (const char* id : {"sweep-step-time", "sweep-comm-wait", "sweep-link-use", "step-time-10mbit", "bytes-1gbit"})
    CHECK(count(std::string("data-chart=\"") + id + "\"") == 1);
  CHECK(count("<polyline") == 6);  // 3 charts x 2 strategies
  CHECK(html.find("data-category=\"ring\" data-value=\"1000\"") != std::string::npos);
  CHECK(html.find("data-category=\"local-sgd:4\" data-value=\"50\"") != std::string::npos);  // accuracy %
  fs::remove_all(dir);
}

// Review fixes of study.html and study_table (issue 14): sweep lines sorted by rate, one
// per delay/loss variant; a missing summary key is an error, a null one "n/a".
TEST_CASE("study.html: sweep lines in order of rate, one per delay/loss variant", "[apps]") {
  const fs::path dir = fs::temp_directory_path() / "ddl_test_sync_study_sweep_lines";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<SweepSetting> sweep;
  for (const auto& link : parse_links("1gbit,10mbit/20ms,100mbit,10mbit"))
    sweep.push_back({link, {row("ring", 1e9 / link.rate_bits, 1)}});
  write_sweep_html(dir.string(), sweep, "sweep");
  const std::string html = slurp(dir / "study.html");
  const size_t chart = html.find("data-chart=\"sweep-step-time\"");
  const auto xs_of = [&](const std::string& series) {  // the polyline's x coordinates, in order
    const size_t g = html.find("data-series=\"" + series + "\"", chart);
    const size_t at = html.find("points=\"", g) + 8;
    std::istringstream points(html.substr(at, html.find('"', at) - at));
    std::vector<double> xs;
    for (std::string p; points >> p;) xs.push_back(std::stod(p.substr(0, p.find(','))));
    return xs;
  };
  const std::vector<double> plain = xs_of("ring"), delayed = xs_of("ring (20ms)");
  CHECK(plain.size() == 3);  // 10mbit, 100mbit, 1gbit: the 20 ms setting is not among them
  CHECK(std::is_sorted(plain.begin(), plain.end()));
  CHECK(delayed.size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("read_study_row: a missing key is an error, a null one n/a", "[apps]") {
  const fs::path dir = fs::temp_directory_path() / "ddl_test_sync_study_row";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string full =
      R"({"event":"summary","steps":{"steps":4,"mean":{"total_s":0.01,"comm_wait_s":0.002}},"pg_bytes_sent":1e6,)"
      R"("pg_bytes_received":2e6,"mean_cpu_percent":null,"peak_rss_bytes":5e7,"wall_s":3,"net_tx_bytes":0,)"
      R"("net_rx_bytes":0,"train_loss":0.5,"test_accuracy_pct":90})";
  std::ofstream((dir / "m.jsonl").string()) << full << "\n";
  const StudyRow r = read_study_row("ddp", (dir / "m.jsonl").string(), 1);
  CHECK(r.step_ms == Approx(10));
  CHECK(std::isnan(r.cpu_percent));
  write_study(dir.string(), {r}, 1, "synthetic", "mlp", "");
  CHECK(slurp(dir / "study.md").find("| n/a |") != std::string::npos);
  CHECK(slurp(dir / "study.csv").find(",n/a,") != std::string::npos);
  std::string cut = full;
  cut.erase(cut.find("\"wall_s\":3,"), 11);
  std::ofstream((dir / "m.jsonl").string()) << cut << "\n";
  CHECK_THROWS_WITH(read_study_row("ddp", (dir / "m.jsonl").string(), 1),
                    Catch::Contains("'wall_s'") && Catch::Contains("m.jsonl"));
  fs::remove_all(dir);
}
