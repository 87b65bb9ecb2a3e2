// The bandwidth sweep's arithmetic and summary (sync_study --hosts N --links ...): link
// columns of a row (bytes on the busiest link per step, link use) and study-sweep.md /
// study-sweep.csv across the link settings. The per-setting tables are study_table's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/sync_study/link_setting.h"
#include "apps/sync_study/study_table.h"

namespace ddl::apps {

// The model's parameter count from a worker's header ("model mlp (658698 parameters)");
// 0 when the log has none.
int64_t params_from_log(const std::string& log_path);

// Fills row.busiest_mb_per_step and row.link_use. See Note [Link use] in study_sweep.cpp.
// Requires row.received_bytes (one per rank) and row.steps from read_study_row.
void link_columns(StudyRow& row, int64_t params, double rate_bits);

struct SweepSetting {
  LinkSetting link;
  std::vector<StudyRow> rows;  // one per strategy, in the order run
};

// DIR/study-sweep.csv (one row per strategy and setting) and DIR/study-sweep.md (time,
// comm wait and link use per strategy across the settings, and the winner at each).
void write_sweep(const std::string& dir, const std::vector<SweepSetting>& settings, int hosts,
                 const std::string& dataset, const std::string& model);

}  // namespace ddl::apps
