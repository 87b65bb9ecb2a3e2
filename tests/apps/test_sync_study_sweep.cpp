// sync_study's sweep parts without a network: --links parsing (RATE[/DELAY[/LOSS]],
// comma-separated), the link columns of a row (busiest link per step without the start-up
// broadcast, link use against rate × comm wait), the parameter count from a worker's
// header, and the files write_study / write_sweep / write_sweep_html produce for two settings;
// the summary's tie rule, the per-rank max and min columns, --repeat's means and ranges, and
// the per-host flags (--cpu, --link hostI=) as they reach ddlrun's command line.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/sync_study/link_setting.h"
#include "apps/sync_study/study_html.h"
#include "apps/sync_study/study_run.h"
#include "apps/sync_study/study_stats.h"
#include "apps/sync_study/study_sweep.h"
#include <ddl/base/error.h>

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

// study.html and study_table: sweep lines sorted by rate, one
// per delay/loss variant; a missing summary key is an error, a null one "n/a".
TEST_CASE("sync_study: tables replace a planted link or FIFO instead of writing through it", "[apps]") {
  // Another local user could plant study.csv -> a file of yours (overwritten through the
  // link) or a FIFO (the write blocks forever) in a shared output folder. The tables are
  // written whole through a fresh temporary file and renamed over whatever is there.
  const fs::path dir = fs::temp_directory_path() / ("ddl_test_sync_study_links_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(dir / "victim") << "precious\n"; }
  fs::create_symlink(dir / "victim", dir / "study.csv");
  fs::create_symlink(dir / "victim", dir / "study-sweep.csv");
  REQUIRE(::mkfifo((dir / "study.md").c_str(), 0600) == 0);
  REQUIRE(::mkfifo((dir / "study-sweep.md").c_str(), 0600) == 0);
  std::vector<StudyRow> rows{row("ring", 10, 9), row("allreduce", 12, 10)};
  write_study(dir.string(), rows, 2, "synthetic", "mlp", "Over loopback.", "study", "");
  const auto links = parse_links("1gbit");
  write_sweep(dir.string(), {SweepSetting{links.front(), rows}}, 2, "synthetic", "mlp");
  CHECK(slurp(dir / "victim") == "precious\n");
  for (const char* f : {"study.csv", "study.md", "study-sweep.csv", "study-sweep.md"}) {
    INFO(f);
    CHECK(fs::is_regular_file(fs::symlink_status(dir / f)));
  }
  CHECK(slurp(dir / "study.csv").rfind("strategy,step_ms,", 0) == 0);
  fs::remove_all(dir);
}

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

namespace {
StudyRow sent_row(const std::string& strategy, double step_ms, double sent_mb) {
  StudyRow r = row(strategy, step_ms, step_ms / 2);
  r.sent_mb = r.received_mb = r.sent_min_mb = r.sent_max_mb = sent_mb;
  return r;
}
std::string summary_of(const std::vector<StudyRow>& rows) { return study_summary(rows); }
}  // namespace

TEST_CASE("study_summary: no winner is named on a tie", "[apps]") {
  // Single runs: 10 and 11 ms are within the 15% run-to-run noise; 30 ms is not. Bytes:
  // 100 and 100.5 MB tie (within 1%), 200 does not.
  const std::string tied =
      summary_of({sent_row("ring", 10, 100), sent_row("ddp", 11, 100.5), sent_row("hub", 30, 200)});
  CHECK(tied.find("was fastest") == std::string::npos);
  CHECK(tied.find("No single fastest: ring and ddp tie at 10.0–11.0 ms per iteration (within 15%") !=
        std::string::npos);
  CHECK(tied.find("the slowest was hub (30.0 ms)") != std::string::npos);
  CHECK(tied.find("ring and ddp tie for the fewest bytes per worker (100.0 MB sent, within 1%)") != std::string::npos);
  CHECK(tied.find("moved the fewest bytes") == std::string::npos);
  // Every row tied: no slowest either.
  const std::string all = summary_of({sent_row("a", 10, 5), sent_row("b", 10, 5), sent_row("c", 10, 5)});
  CHECK(all.find("No single fastest: a, b and c tie at 10.0–10.0 ms per iteration") != std::string::npos);
  CHECK(all.find("a, b and c tie for the fewest bytes") != std::string::npos);
  CHECK(all.find("slowest") == std::string::npos);
  // Clear differences: one winner, named with its margins.
  const std::string clear = summary_of({sent_row("ring", 10, 100), sent_row("hub", 20, 150)});
  CHECK(clear.find("ring was fastest at 10.0 ms per iteration, 100.0% ahead of hub and 2.00x faster than the "
                   "slowest, hub (20.0 ms).") != std::string::npos);
  CHECK(clear.find("ring moved the fewest bytes per worker (100.0 MB sent).") != std::string::npos);
  // Repeated runs: ranges decide, not the 15% band. 10 vs 11 ms whose ranges do not overlap
  // has a winner; 10 vs 13 ms whose ranges overlap is a tie.
  auto a = sent_row("a", 10, 1), b = sent_row("b", 11, 2);
  a.repeats = b.repeats = 3;
  a.spread["step_ms"] = {9.8, 10.2}, b.spread["step_ms"] = {10.5, 11.5};
  CHECK(summary_of({a, b}).find("a was fastest at 10.0 ms") != std::string::npos);
  b.step_ms = 13, b.spread["step_ms"] = {10.1, 16};
  const std::string overlap = summary_of({a, b});
  CHECK(overlap.find("No single fastest: a and b tie at 10.0–13.0 ms per iteration (their min–max ranges over 3 "
                     "runs overlap)") != std::string::npos);
}

TEST_CASE("read_study_row: the busiest and idlest rank beside the mean", "[apps]") {
  const fs::path dir = fs::temp_directory_path() / "ddl_test_sync_study_ranks";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A hub at rank 0: it sends 150 MB and waits 2 ms; the workers send 75 MB and wait 5 and 6 ms.
  const double sent[] = {150e6, 75e6, 75e6}, wait[] = {0.002, 0.005, 0.006};
  for (int r = 0; r < 3; ++r)
    std::ofstream((dir / ("m.rank" + std::to_string(r) + ".jsonl")).string())
        << R"({"event":"summary","steps":{"steps":4,"mean":{"total_s":0.01,"comm_wait_s":)" << wait[r]
        << R"(}},"pg_bytes_sent":)" << sent[r] << R"(,"pg_bytes_received":1e6,"mean_cpu_percent":50,)"
        << R"("peak_rss_bytes":5e7,"wall_s":3,"net_tx_bytes":0,"net_rx_bytes":0,"train_loss":0.5,)"
        << R"("test_accuracy_pct":90})"
        << "\n";
  const StudyRow r = read_study_row("param-server", (dir / "m.jsonl").string(), 3);
  CHECK(r.sent_mb == Approx(100));
  CHECK(r.sent_max_mb == Approx(150));
  CHECK(r.sent_min_mb == Approx(75));
  CHECK(r.sent_max_rank == 0);
  CHECK(r.comm_ms == Approx(13.0 / 3));
  CHECK(r.comm_max_ms == Approx(6));
  CHECK(r.comm_min_ms == Approx(2));
  CHECK(r.comm_max_rank == 2);
  write_study(dir.string(), {r, sent_row("ring", 10, 100)}, 3, "synthetic", "mlp", "");
  const std::string md = slurp(dir / "study.md");
  CHECK(md.find("| 2.0–6.0 (max: rank 2) | 100.0 | 75.0–150.0 (max: rank 0) |") != std::string::npos);
  CHECK(md.find("param-server's rank 0 (150.0 MB, 1.5x)") != std::string::npos);
  const std::string csv = slurp(dir / "study.csv");
  CHECK(csv.find(",sent_mb_min_rank,sent_mb_max_rank,sent_max_rank,comm_wait_ms_min_rank,comm_wait_ms_max_rank,"
                 "comm_max_rank,repeats,") != std::string::npos);
  CHECK(csv.find(",75,150,0,2,6,2,1,") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("combine_runs: --repeat's means and min–max ranges", "[apps]") {
  std::vector<StudyRow> runs = {row("ring", 9, 4), row("ring", 12, 5), row("ring", 9, 6)};
  for (auto& r : runs) r.sent_mb = 7, r.train_loss = 0.25;
  const StudyRow c = combine_runs(runs);
  CHECK(c.repeats == 3);
  CHECK(c.step_ms == Approx(10));
  CHECK(c.spread.at("step_ms") == std::pair<double, double>(9, 12));
  CHECK(c.comm_ms == Approx(5));
  CHECK(c.spread.at("comm_wait_ms") == std::pair<double, double>(4, 6));
  CHECK(c.spread.at("sent_mb_per_worker") == std::pair<double, double>(7, 7));
  CHECK(combine_runs({runs[0]}).spread.empty());
  runs[1].cpu_percent = std::nan("");
  CHECK(std::isnan(combine_runs(runs).spread.at("cpu_percent").second));
  const fs::path dir = fs::temp_directory_path() / "ddl_test_sync_study_repeat";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_study(dir.string(), {c}, 2, "synthetic", "mlp", "");
  const std::string md = slurp(dir / "study.md");
  CHECK(md.find("Each strategy ran 3 times (--repeat)") != std::string::npos);
  CHECK(md.find("| ring | 10.0 (9.0–12.0) | 5.0 (4.0–6.0) |") != std::string::npos);
  const std::string csv = slurp(dir / "study.csv");
  CHECK(csv.find(",step_ms_min,step_ms_max,comm_wait_ms_min,comm_wait_ms_max,") != std::string::npos);
  CHECK(csv.find(",3,9,12,4,6,") != std::string::npos);  // repeats, then the ranges
  fs::remove_all(dir);
}

TEST_CASE("sync_study --cpu and --link hostI=: a straggler reaches ddlrun's command line", "[apps]") {
  StudyConfig cfg;
  cfg.bin_dir = "/opt/ddl/bin";
  cfg.hosts = cfg.nproc = 3;
  cfg.cpu = {host_cpu_arg("host1=0.5", 3)};
  cfg.host_links = {host_link_arg("host2=10mbit/20ms", 3)};
  const auto link = parse_links("100mbit").front();
  const std::string cmd = train_command(cfg, "param-server", "m.jsonl", &link);
  CHECK(cmd.find("/opt/ddl/bin/ddlrun --all-ranks --hosts 3 --link 100mbit --link host2=10mbit,20ms --cpu host1=0.5 "
                 "/opt/ddl/bin/train_cifar ") != std::string::npos);
  // --repeat: each run's timeline has its own file.
  cfg.repeat = 2;
  cfg.trace = "/tmp/t.json";
  CHECK(train_command(cfg, "ring", "m.jsonl", &link, 2).find("--trace /tmp/t.ring.run2.100mbit.json") !=
        std::string::npos);
  cfg.repeat = 1;
  CHECK(train_command(cfg, "ring", "m.jsonl", &link).find("--trace /tmp/t.ring.100mbit.json") != std::string::npos);
  // Without hosts the per-host flags mean nothing and are not passed.
  cfg.hosts = 0;
  CHECK(train_command(cfg, "ring", "m.jsonl", nullptr).find("--cpu") == std::string::npos);
  for (const char* bad : {"host3=0.5", "host1=0", "host1=x", "1=0.5", "host1", "hostx=1", "host1=0.5x", "host1="})
    CHECK_THROWS_AS(host_cpu_arg(bad, 3), ddl::Error);
  CHECK(host_link_arg("host0=1gbit", 3) == "host0=1gbit");
  for (const char* bad : {"host3=10mbit", "host1=10mbps", "host1=10mbit,20ms", "host1=$(x)", "10mbit"})
    CHECK_THROWS_AS(host_link_arg(bad, 3), ddl::Error);
  CHECK_THROWS_WITH(host_cpu_arg("host5=0.5", 3), Catch::Contains("host0..host2"));
}
