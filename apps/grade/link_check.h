// Grading on emulated hosts with a shaped link (ddl-grade --hosts --link RATE; docs/labs/
// README.md): the "link use" check of the p2p and ring labs. It is a lower bound, the
// one thing about time that stays stable on a shared machine: no rank can move its bytes
// faster than its link allows, so a run that seems to did not use the link it was given.
#pragma once

#include <string>
#include <vector>

#include "apps/grade/grade_case.h"
#include "apps/grade/grade_run.h"
#include "apps/grade/labs.h"

namespace ddl::grade {

// Bytes per second of ddlrun's --link spec "RATE[,DELAY[,LOSS]]", RATE in tc's units
// (bit, kbit, mbit, gbit, e.g. 100mbit); throws a ddl::Error for anything else.
double link_rate_bytes_per_s(const std::string& spec);

// Each rank's training loop took at least 3/4 of its busier direction's bytes over the
// link rate. Graded for ranks that move at least 16·N token-bucket bursts per step (see
// Note [Link bound] in link_check.cpp); otherwise passes, saying so.
Check check_link(const Case& c, const std::vector<RankTraffic>& traffic, const std::vector<double>& loop_seconds,
                 const std::string& link, Check k);

}  // namespace ddl::grade
