// The grader's side of one case: launches the ranks through ddlrun with a deadline, kills
// a run that outlives it (naming the ranks that had not finished), then scores the checks
// of the lab on what the ranks wrote (docs/labs/README.md, "What the grader checks").
#pragma once

#include <string>
#include <vector>

#include "apps/grade/grade_case.h"
#include "apps/grade/labs.h"

namespace ddl::grade {

// One line of the score table and one entry of Gradescope's results.json "tests".
struct Check {
  std::string name;
  double score = 0, max_score = 1;
  std::string output;  // the reason, in words
  bool hidden = false;
};

struct RunConfig {
  std::string self;     // this program, started by ddlrun with --worker
  std::string ddlrun;   // the launcher
  std::string workdir;  // a fresh folder per case is made in it
  std::string strategy;
  std::vector<std::string> plugins;
  double timeout_s = 60;
  bool hosts = false;  // one emulated host per rank (ddlrun --hosts; root)
  std::string link;    // with hosts: ddlrun's --link RATE, and the p2p and ring labs' link use check
};

// Runs `c` and returns its checks: finished in time, equals one process, identical
// replicas, bytes per rank, and (p2p labs) send/recv only.
std::vector<Check> grade_case(const Lab& lab, const Case& c, int index, const RunConfig& cfg);

}  // namespace ddl::grade
