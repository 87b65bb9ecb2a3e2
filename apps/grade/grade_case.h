// One graded run: how many ranks, the model's sizes and the batches, and the rank side of
// it (run_rank: ddl-grade --worker under ddlrun). The student's strategy trains a small
// MLP for a few SGD steps; each rank writes its final weights and its byte counts to the
// run's folder, and rank 0 also the weights of one process on the whole batch.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ddl/nn/module.h>

namespace ddl::grade {

struct Case {
  int ranks = 2;
  int64_t in = 6, hidden = 10, out = 3;  // Linear(in, hidden), ReLU, Linear(hidden, out)
  int64_t batch = 2;                     // rows per rank per step
  int64_t steps = 3;
  uint64_t seed = 1;
  int64_t cap = 160;         // lab ddp-buckets: the bucket cap in bytes (W2 and b2 share the first bucket)
  bool hidden_case = false;  // from the instructor's --hidden: reported after publication
  std::string fault;         // lab fault: which rank the grader kills and when (fault_case.h); "" otherwise
  int64_t parameters() const { return in * hidden + hidden + hidden * out + out; }
  std::string describe() const;  // "3 ranks, 103 floats (in 6, hidden 10, out 3), batch 2, 3 steps"
  std::string to_args() const;   // "ranks=3 in=6 ..." (the --hidden file's line format)
};

// Parses "ranks=3 in=13 hidden=37 out=7 batch=3 steps=2 seed=9 cap=160" (any subset; the rest
// default); throws a ddl::Error naming the bad field.
Case parse_case(const std::string& line);
// --hidden: a file of such lines (# comments), or "seed:N": three cases drawn from N.
std::vector<Case> hidden_cases(const std::string& spec);

// The rank side, under ddlrun: trains with `strategy` (after loading `plugins`) and writes
// dir/rank<r>.bin (weights), dir/rank<r>.json (bytes), dir/reference.bin (rank 0), or
// dir/rank<r>.error. Returns the exit status.
// Lab ddp-buckets (`lab`) also writes what each step all-reduced and when (see
// recording_group.h) and what one all_reduce of each of the handout's buckets costs.
int run_rank(const Case& c, const std::string& strategy, const std::vector<std::string>& plugins,
             const std::string& dir, const std::string& lab = "");

// What a rank leaves for the grader, both written whole (files::AtomicFile): the module's
// parameters as raw float32, and a JSON result, whose presence says the rank finished.
void write_weights(const nn::Module& m, const std::string& path);
void write_json(const nlohmann::json& j, const std::string& path);

}  // namespace ddl::grade
