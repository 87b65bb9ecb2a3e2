// study.html: the study's comparisons as charts, from the same StudyRow values that
// study.md and study.csv print (report/html_report.h draws them). One run: per-strategy
// bars. A bandwidth sweep: lines over the link rate, one per strategy (and delay/loss
// variant), then each setting's bars. It reads no files and measures nothing.
#pragma once

#include <string>
#include <vector>

#include "apps/sync_study/study_sweep.h"
#include "apps/sync_study/study_table.h"

namespace ddl::apps {

// DIR/study.html for one run of every strategy (`title` names the setting).
void write_study_html(const std::string& dir, const std::vector<StudyRow>& rows, const std::string& title);
// DIR/study.html for a sweep: charts "sweep-step-time", "sweep-comm-wait", "sweep-link-use"
// (x: link rate in Mbit/s; a line per strategy, or per strategy and delay/loss when the
// settings have them, named "ring (20ms)"), then per setting the charts of
// write_study_html, ids suffixed with "-" + the setting's label.
void write_sweep_html(const std::string& dir, const std::vector<SweepSetting>& settings, const std::string& title);

}  // namespace ddl::apps
