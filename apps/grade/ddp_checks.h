// Lab ddp-buckets' own checks (labs/ddp/README.md): the buckets its handout's rule gives
// for a case's MLP, and, from what each rank's RecordingGroup saw, whether a strategy
// all-reduced exactly those buckets every step and started one while backward still ran.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/grade/grade_case.h"
#include "apps/grade/grade_run.h"

namespace ddl::grade {

// The handout's buckets for the case's Linear(in, hidden), ReLU, Linear(hidden, out):
// parameters W1, b1, W2, b2 (indices 0..3), walked from the last, a new bucket whenever
// the next parameter would take the current one past c.cap bytes. Parameter indices per
// bucket, in launch order.
std::vector<std::vector<int64_t>> handout_buckets(const Case& c);
// Each bucket's size in floats.
std::vector<int64_t> bucket_numels(const Case& c);

// "buckets": every rank's all_reduce calls of every step are the handout's buckets, in
// order. "overlap": in every step where it was possible (the first bucket was full before
// the last gradient arrived), some all_reduce started before the last gradient arrived.
// `ranks[r]` is rank r's JSON with "steps" as the worker writes it.
Check check_buckets(const Case& c, const std::vector<nlohmann::json>& ranks, Check k);
Check check_overlap(const Case& c, const std::vector<nlohmann::json>& ranks, Check k);

}  // namespace ddl::grade
