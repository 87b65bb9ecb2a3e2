// Lab fault (labs/fault/README.md): each case runs under `ddlrun --max-restarts 1`; on the
// first attempt the grader's worker kills one rank, either between two checkpoints or in
// the middle of writing one (RLIMIT_FSIZE cuts the write: the kernel sends SIGXFSZ, see
// setrlimit(2)), and the restarted group must resume from the newest step that every
// rank holds and train to the end. This file holds the plan of a kill, the rank side of
// such a run, and the checks only this lab has: agreement and atomic writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "apps/grade/grade_case.h"
#include "apps/grade/grade_run.h"

namespace ddl::grade {

struct FaultPlan {
  int64_t every = 2;      // the strategy checkpoints every `every` steps (DDL_LAB_CHECKPOINT_EVERY)
  int kill_rank = 1;      // the rank that dies on the first attempt
  int64_t kill_step = 3;  // after this many steps (between checkpoints), or writing this step's (torn)
  bool torn = false;      // die while writing the checkpoint of kill_step (a multiple of every)

  // The newest step every rank holds a complete checkpoint of when the rank dies.
  int64_t expected_resume() const { return torn ? kill_step - every : kill_step / every * every; }
  // The file size the dying rank may write in a torn case: half the model's float32 bytes,
  // so that any file holding the weights is cut.
  static int64_t torn_limit(const Case& c) { return c.parameters() * 2; }
  std::string describe() const;  // "rank 1 is killed after step 5 (checkpoints every 2 steps)"
  std::string to_args() const;   // "every=2 rank=1 step=5 torn=0"
};
FaultPlan parse_fault_plan(const std::string& args);

// The lab's cases: each of `cases` twice, once killed between checkpoints and once cut
// while writing one, with at least 3 checkpoint intervals of steps. Case::fault holds the plan.
std::vector<Case> fault_cases(const std::vector<Case>& cases);

// The rank side (ddl-grade --worker --fault ...): as run_rank, plus the kill on attempt 0
// (DDL_RESTART_COUNT) and, on the restart, dir/rank<r>.resume.json: the step the rank
// resumed from (the model's "step" buffer after the strategy's constructor) and the
// checkpoint files it held under their final names.
int run_fault_rank(const Case& c, const FaultPlan& plan, const std::string& strategy,
                   const std::vector<std::string>& plugins, const std::string& dir);

// The checks of a fault case after the shared ones (finishes, equals, identical replicas):
// agreement, and for a torn case atomic writes. `mk` names a check as grade_case does.
std::vector<Check> fault_checks(const Case& c, const std::filesystem::path& dir,
                                const std::function<Check(const std::string&)>& mk);

}  // namespace ddl::grade
