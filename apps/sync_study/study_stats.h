// sync_study's statistics: repeated runs of one configuration (--repeat N) combined into
// one row of means with each measured column's min and max over the runs, and the rule
// the summaries follow to name a winner: never on a tie. It reads and runs nothing.
#pragma once

#include <string>
#include <vector>

#include "apps/sync_study/study_table.h"

namespace ddl::apps {

struct MeasuredColumn {
  const char* key;          // study.csv's column; its spread is KEY_min, KEY_max
  double StudyRow::*field;  // the row's value
  double scale;             // the CSV's unit over the field's (link use: percent of a fraction)
  bool link;                // only in tables of a link setting
};
// Every column a run measures, in study.csv's order.
const std::vector<MeasuredColumn>& measured_columns();

// One row from `runs` of one strategy: every measured column's mean over the runs, and its
// (min, max) in `spread` (n/a in any run makes it n/a); the step count, per-rank bytes and
// the ranks of the maxima come from the first run. One run is returned as it is.
StudyRow combine_runs(const std::vector<StudyRow>& runs);

// Byte counts within this relative distance tie: the exact strategies differ by less
// (e.g. allreduce's per-tensor chunks against ring's one flat buffer, 0.03% on VGG-11).
inline constexpr double kBytesTie = 0.01;
// Without --repeat, times within this relative distance tie: two back-to-back runs of one
// strategy were 13% apart on the 2-core machine of bench/RESULTS.md (docs/study.md).
inline constexpr double kSingleRunNoise = 0.15;

// The rows tied with the fastest (in row order; the fastest first among equals): when both
// rows were repeated, those whose min-max range of step time reaches down to the fastest's
// max; otherwise those within kSingleRunNoise of its mean. Rows without a time are left out.
std::vector<const StudyRow*> fastest_rows(const std::vector<const StudyRow*>& rows);
// The rows within kBytesTie of the fewest MB sent per worker, in row order.
std::vector<const StudyRow*> fewest_bytes_rows(const std::vector<const StudyRow*>& rows);
// "a", "a and b", "a, b and c".
std::string name_list(const std::vector<const StudyRow*>& rows);
// A cell of study.md: the value, and " (min–max)" after it when the row was repeated.
std::string cell_with_spread(const StudyRow& row, const char* key, int digits = 1);

// study.md's closing paragraph: the fastest and by how much (or which strategies tied, and
// under which rule), the fewest bytes (every strategy tied for them), a hub whose busiest
// rank sent far more than the mean, and which strategies compute the same updates.
std::string study_summary(const std::vector<StudyRow>& rows);

}  // namespace ddl::apps
