// study.html (see study_html.h).
#include "apps/sync_study/study_html.h"

#include <algorithm>
#include <filesystem>

#include <ddl/report/html_report.h>

namespace ddl::apps {
namespace {

using report::BarChart;
using report::Series;

// What a link setting adds to its rate: "20ms", "20ms/1%", or "" (the rate alone).
std::string variant(const LinkSetting& link) {
  const size_t slash = link.spec.find('/');
  return slash == std::string::npos ? "" : link.spec.substr(slash + 1);
}

// The per-strategy charts and table of one setting; `suffix` keeps chart ids unique.
void strategy_charts(report::HtmlReport& r, const std::vector<StudyRow>& rows, const std::string& suffix) {
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.strategy);
  const auto column = [&](const char* name, auto value) {
    Series s{name, {}, {}};
    for (const auto& row : rows) s.y.push_back(value(row));
    return s;
  };
  r.add(BarChart{"step-time" + suffix,
                 "Time per iteration and communication wait (mean over workers)",
                 "strategy",
                 "time (ms)",
                 names,
                 {column("ms / iteration", [](const StudyRow& x) { return x.step_ms; }),
                  column("comm wait", [](const StudyRow& x) { return x.comm_ms; })},
                 false});
  r.add(BarChart{"bytes" + suffix,
                 "Process-group traffic per worker (whole run)",
                 "strategy",
                 "MB (10^6 bytes)",
                 names,
                 {column("sent", [](const StudyRow& x) { return x.sent_mb; }),
                  column("received", [](const StudyRow& x) { return x.received_mb; })},
                 false});
  r.add(BarChart{"accuracy" + suffix,
                 "Test accuracy (rank 0)",
                 "strategy",
                 "accuracy (%)",
                 names,
                 {column("test accuracy", [](const StudyRow& x) { return x.test_accuracy_pct; })},
                 false});
  r.add(BarChart{"loss" + suffix,
                 "Final training loss (rank 0)",
                 "strategy",
                 "loss",
                 names,
                 {column("train loss", [](const StudyRow& x) { return x.train_loss; })},
                 false});
  report::HtmlTable t{"study" + suffix,
                      "The numbers charted",
                      {"strategy", "ms / iteration", "comm wait ms", "MB sent / worker", "MB received / worker",
                       "CPU %", "peak RSS MB", "train loss", "test accuracy %"},
                      {}};
  for (const auto& x : rows)
    t.rows.push_back({x.strategy, report::format_number(x.step_ms), report::format_number(x.comm_ms),
                      report::format_number(x.sent_mb), report::format_number(x.received_mb),
                      report::format_number(x.cpu_percent), report::format_number(x.peak_rss_mb),
                      report::format_number(x.train_loss), report::format_number(x.test_accuracy_pct)});
  r.add(t);
}

}  // namespace

void write_study_html(const std::string& dir, const std::vector<StudyRow>& rows, const std::string& title) {
  report::HtmlReport r(title);
  strategy_charts(r, rows, "");
  r.write((std::filesystem::path(dir) / "study.html").string());
}

void write_sweep_html(const std::string& dir, const std::vector<SweepSetting>& settings, const std::string& title) {
  report::HtmlReport r(title);
  if (settings.empty()) return;
  r.section("Across link rates");
  // One line per strategy and delay/loss variant, its points in order of rate: settings
  // that differ only in delay or loss are separate lines, never joined into one.
  std::vector<std::string> variants;
  for (const auto& setting : settings)
    if (std::find(variants.begin(), variants.end(), variant(setting.link)) == variants.end())
      variants.push_back(variant(setting.link));
  const auto across = [&](const std::string& id, const std::string& caption, const std::string& y_label,
                          double (*value)(const StudyRow&)) {
    report::LineChart c{id, caption, "link rate (Mbit/s, log scale)", y_label, {}, true};
    for (const std::string& v : variants)
      for (size_t k = 0; k < settings.front().rows.size(); ++k) {
        std::vector<std::pair<double, double>> points;
        for (const auto& setting : settings)
          if (variant(setting.link) == v && k < setting.rows.size())
            points.emplace_back(setting.link.rate_bits / 1e6, value(setting.rows[k]));
        std::sort(points.begin(), points.end());
        Series s{settings.front().rows[k].strategy + (v.empty() ? "" : " (" + v + ")"), {}, {}};
        for (const auto& [x, y] : points) s.x.push_back(x), s.y.push_back(y);
        c.series.push_back(s);
      }
    r.add(c);
  };
  across("sweep-step-time", "Time per iteration", "time (ms)", [](const StudyRow& x) { return x.step_ms; });
  across("sweep-comm-wait", "Communication wait per iteration", "time (ms)",
         [](const StudyRow& x) { return x.comm_ms; });
  across("sweep-link-use", "Link use (busiest link's bytes per step / (rate x comm wait))", "link use (%)",
         [](const StudyRow& x) { return 100 * x.link_use; });
  for (const auto& setting : settings) {
    r.section("Links at " + setting.link.spec);
    strategy_charts(r, setting.rows, "-" + setting.link.label);
  }
  r.write((std::filesystem::path(dir) / "study.html").string());
}

}  // namespace ddl::apps
