// ddl-grade: runs a lab's checks on a student's synchronisation strategy and prints a score
// per check with a reason, after CMU 10-414's mugrade; --json writes Gradescope's
// results.json. Each case is a real multi-process job under ddlrun (docs/labs/README.md).
//   ddl-grade --lab ring --plugin ./libmine.so                      (cases on 2 and 3 ranks)
//   ddl-grade --lab ring --plugin ./libmine.so --hidden cases.txt --json results.json
//   ddl-grade --lab ring --plugin ./libmine.so --hosts --link 50mbit   (emulated hosts; root)
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/common/finite_range.h"
#include "apps/grade/fault_case.h"
#include "apps/grade/grade_run.h"
#include "apps/grade/link_check.h"
#include <ddl/base/error.h>
#include <ddl/dist/sync/plugin.h>
#include <ddl/dist/sync/registry.h>
#include <ddl/trace/atomic_file.h>

namespace fs = std::filesystem;
using namespace ddl::grade;

namespace {

std::vector<Case> public_cases(const std::string& ranks) {
  std::vector<Case> cases;
  std::stringstream in(ranks);
  for (std::string r; std::getline(in, r, ',');) cases.push_back(parse_case("ranks=" + r));
  DDL_CHECK(!cases.empty(), "ddl-grade: --ranks '", ranks, "' names no rank count (e.g. 2,3)");
  return cases;
}

// A check's reason under its line, each of its lines indented.
std::string indented(const std::string& text) {
  std::string out = "        ";
  for (const char ch : text) out += ch == '\n' ? std::string("\n        ") : std::string(1, ch);
  return out;
}

// Why the plugins cannot be graded ("" when they can): one fails to load, or none
// registers `strategy`. Loaded here too, so the reason comes once and at once.
std::string plugin_problem(const std::vector<std::string>& plugins, const std::string& strategy) {
  try {
    for (const auto& p : plugins) ddl::dist::load_sync_plugin(p);
  } catch (const std::exception& e) {
    return e.what();
  }
  const std::string why = ddl::dist::sync_spec_problem(strategy);
  return why.empty() ? "" : why + "; does your plugin register the name the handout asks for (or give --strategy)?";
}

// Gradescope's autograder results format: a score, and per test a name, score, max_score,
// output and visibility ("after_published" hides the instructor's cases until then).
void write_results(const std::string& path, const std::vector<Check>& checks, const std::string& summary) {
  nlohmann::json tests = nlohmann::json::array();
  double score = 0;
  for (const auto& c : checks) {
    score += c.score;
    tests.push_back({{"name", c.name},
                     {"score", c.score},
                     {"max_score", c.max_score},
                     {"output", c.output},
                     {"visibility", c.hidden ? "after_published" : "visible"}});
  }
  // Whole or not at all, replacing (never following) whatever is at --json: a planted link
  // or a FIFO nobody reads cannot redirect or hang it.
  ddl::files::write_atomically(
      path,
      nlohmann::json{{"score", score}, {"output", summary}, {"visibility", "visible"}, {"tests", tests}}.dump(2) + "\n",
      "ddl-grade --json");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddl-grade: grade a synchronisation strategy against a lab (docs/labs/README.md)"};
  std::string lab_id, strategy, ranks = "2,3", hidden, json_path, case_args, dir, fault_args;
  std::vector<std::string> plugins;
  double timeout_s = 60;
  bool worker = false, list = false, keep = false;
  app.add_option("--lab", lab_id,
                 "the lab: p2p-gather-scatter, p2p-allreduce, ring, ddp-buckets or fault (--list-labs)");
  app.add_option("--strategy", strategy, "the strategy to grade (default: the name the lab's handout asks for)");
  app.add_option("--plugin", plugins, "a shared library that registers it (repeatable)");
  app.add_option("--ranks", ranks, "the public cases' rank counts, comma-separated (each in [2, 16])");
  app.add_option("--hidden", hidden,
                 "the instructor's cases: a file of 'ranks=5 in=13 hidden=37 ...' lines, or seed:N");
  app.add_option("--json", json_path, "write Gradescope's results.json here");
  app.add_option("--timeout", timeout_s, "seconds a case may run before it counts as a deadlock")
      ->check(ddl::apps::FiniteRange(1.0, 3600.0));
  app.add_flag("--list-labs", list, "print the labs and exit");
  bool hosts = false;
  std::string link;
  app.add_flag("--hosts", hosts, "run each case's ranks on emulated hosts, one each (ddlrun --hosts; needs root)");
  app.add_option("--link", link,
                 "with --hosts: every host's link rate (ddlrun --link, e.g. 100mbit); adds the p2p and ring labs' "
                 "link use check")
      ->needs("--hosts");
  app.add_flag("--keep", keep, "keep the runs' folders (logs, weights) and print where");
  app.add_flag("--worker", worker, "internal: one rank of a case, started by ddlrun")->group("");
  app.add_option("--case", case_args, "internal: the case")->group("");
  app.add_option("--dir", dir, "internal: where the rank writes")->group("");
  app.add_option("--fault", fault_args, "internal: lab fault's kill plan")->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every flag error is a usage error: 2 (docs/labs/README.md),
    // not CLI11's own codes (107 and up), which read like a grade.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (worker) {
    alarm(static_cast<unsigned>(timeout_s) + 15);  // See Note [Killing a run]
    if (!fault_args.empty())
      return run_fault_rank(parse_case(case_args), parse_fault_plan(fault_args), strategy, plugins, dir);
    return run_rank(parse_case(case_args), strategy, plugins, dir, lab_id);
  }
  if (list) {
    for (const auto& l : labs()) std::cout << l.id << "\t" << l.strategy << "\t" << l.title << "\n";
    return 0;
  }
  try {
    DDL_CHECK(!lab_id.empty(), "ddl-grade: give --lab (one of --list-labs)");
    const Lab& lab = find_lab(lab_id);
    RunConfig cfg;
    cfg.self = fs::read_symlink("/proc/self/exe").string();
    const char* env = std::getenv("DDL_GRADE_DDLRUN");
    cfg.ddlrun = env ? env : (fs::path(cfg.self).parent_path() / "ddlrun").string();
    DDL_CHECK(fs::exists(cfg.ddlrun), "ddl-grade: no launcher at ", cfg.ddlrun, " (set DDL_GRADE_DDLRUN)");
    cfg.strategy = strategy.empty() ? lab.strategy : strategy;
    for (const auto& p : plugins) {
      DDL_CHECK(fs::is_regular_file(p), "ddl-grade: --plugin ", p, " is not a file");
      cfg.plugins.push_back(fs::absolute(p).string());
    }
    cfg.timeout_s = timeout_s;
    cfg.hosts = hosts;
    cfg.link = link;
    DDL_CHECK(!hosts || geteuid() == 0,
              "ddl-grade: --hosts needs root (ddlrun builds network namespaces and links; docs/cluster.md)");
    if (!link.empty()) link_rate_bytes_per_s(link);  // a bad rate is a usage error, before any run
    std::vector<Case> cases = public_cases(ranks);
    if (!hidden.empty())
      for (const auto& c : hidden_cases(hidden)) cases.push_back(c);
    if (lab.id == "fault") cases = fault_cases(cases);
    std::cout << "ddl-grade: lab " << lab.id << " (" << lab.title << "), strategy " << cfg.strategy << "\n";
    if (const std::string why = plugin_problem(cfg.plugins, strategy_spec(lab, cfg.strategy, Case{})); !why.empty()) {
      // A result all the same, so an autograder shows the reason rather than a crash.
      const Check k{"the plugin loads and registers " + cfg.strategy, 0, 1, why, false};
      std::cout << "  FAIL 0/1  " << k.name << "\n" << indented(k.output) << "\nddl-grade: score 0/1\n";
      if (!json_path.empty()) write_results(json_path, {k}, "score 0/1");
      return 1;
    }
    char tmpl[] = "/tmp/ddl-grade.XXXXXX";
    DDL_CHECK(mkdtemp(tmpl), "ddl-grade: cannot create a folder in /tmp");
    cfg.workdir = tmpl;

    std::vector<Check> checks;
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto got = grade_case(lab, cases[i], static_cast<int>(i + 1), cfg);
      for (const auto& k : got) {
        std::cout << (k.score == k.max_score ? "  PASS " : "  FAIL ") << k.score << "/" << k.max_score << "  " << k.name
                  << "\n"
                  << indented(k.output) << "\n";
      }
      checks.insert(checks.end(), got.begin(), got.end());
    }
    double score = 0, max_score = 0;
    for (const auto& k : checks) score += k.score, max_score += k.max_score;
    const std::string summary = "score " + std::to_string(int(score)) + "/" + std::to_string(int(max_score));
    std::cout << "ddl-grade: " << summary << "\n";
    if (!json_path.empty()) write_results(json_path, checks, summary);
    if (keep)
      std::cout << "ddl-grade: the runs are in " << cfg.workdir << "\n";
    else
      fs::remove_all(cfg.workdir);
    return score == max_score ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
