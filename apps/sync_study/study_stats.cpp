// Repeated runs and the tie rule (see study_stats.h).
#include "apps/sync_study/study_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <ddl/base/error.h>
#include <ddl/dist/sync/registry.h>

namespace ddl::apps {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string f(double v, int digits = 1) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A rank that sent more than this times the mean over workers is named (a hub shows so).
constexpr double kHubFactor = 1.25;
}  // namespace

const std::vector<MeasuredColumn>& measured_columns() {
  static const std::vector<MeasuredColumn> all = {
      {"step_ms", &StudyRow::step_ms, 1, false},
      {"comm_wait_ms", &StudyRow::comm_ms, 1, false},
      {"sent_mb_per_worker", &StudyRow::sent_mb, 1, false},
      {"received_mb_per_worker", &StudyRow::received_mb, 1, false},
      {"cpu_percent", &StudyRow::cpu_percent, 1, false},
      {"peak_rss_mb", &StudyRow::peak_rss_mb, 1, false},
      {"train_loss", &StudyRow::train_loss, 1, false},
      {"test_accuracy_pct", &StudyRow::test_accuracy_pct, 1, false},
      {"wall_s", &StudyRow::wall_s, 1, false},
      {"sent_mb_min_rank", &StudyRow::sent_min_mb, 1, false},
      {"sent_mb_max_rank", &StudyRow::sent_max_mb, 1, false},
      {"comm_wait_ms_min_rank", &StudyRow::comm_min_ms, 1, false},
      {"comm_wait_ms_max_rank", &StudyRow::comm_max_ms, 1, false},
      {"link_sent_mb_per_host", &StudyRow::net_tx_mb, 1, true},
      {"link_received_mb_per_host", &StudyRow::net_rx_mb, 1, true},
      {"busiest_link_mb_per_step", &StudyRow::busiest_mb_per_step, 1, true},
      {"link_use_percent", &StudyRow::link_use, 100, true},
  };
  return all;
}

StudyRow combine_runs(const std::vector<StudyRow>& runs) {
  DDL_CHECK(!runs.empty(), "sync_study: no run to combine");
  if (runs.size() == 1) return runs.front();
  StudyRow out = runs.front();
  out.repeats = static_cast<int>(runs.size());
  for (const auto& c : measured_columns()) {
    double sum = 0, lo = runs.front().*c.field, hi = lo;
    for (const auto& r : runs) {
      const double v = r.*c.field;
      sum += v;
      lo = std::isnan(v) || std::isnan(lo) ? kNaN : std::min(lo, v);
      hi = std::isnan(v) || std::isnan(hi) ? kNaN : std::max(hi, v);
    }
    out.*c.field = sum / static_cast<double>(runs.size());
    out.spread[c.key] = {lo, hi};
  }
  return out;
}

std::vector<const StudyRow*> fastest_rows(const std::vector<const StudyRow*>& rows) {
  const StudyRow* best = nullptr;
  for (const StudyRow* r : rows)
    if (std::isfinite(r->step_ms) && (!best || r->step_ms < best->step_ms)) best = r;
  std::vector<const StudyRow*> tied;
  if (!best) return tied;
  tied.push_back(best);
  for (const StudyRow* r : rows) {
    if (r == best || !std::isfinite(r->step_ms)) continue;
    const auto mine = r->spread.find("step_ms"), theirs = best->spread.find("step_ms");
    const bool ranges = mine != r->spread.end() && theirs != best->spread.end();
    if (ranges ? mine->second.first <= theirs->second.second : r->step_ms <= best->step_ms * (1 + kSingleRunNoise))
      tied.push_back(r);
  }
  return tied;
}

std::vector<const StudyRow*> fewest_bytes_rows(const std::vector<const StudyRow*>& rows) {
  double least = std::numeric_limits<double>::infinity();
  for (const StudyRow* r : rows)
    if (std::isfinite(r->sent_mb)) least = std::min(least, r->sent_mb);
  std::vector<const StudyRow*> tied;
  for (const StudyRow* r : rows)
    if (std::isfinite(r->sent_mb) && r->sent_mb <= least * (1 + kBytesTie)) tied.push_back(r);
  return tied;
}

std::string name_list(const std::vector<const StudyRow*>& rows) {
  std::string s;
  for (size_t i = 0; i < rows.size(); ++i)
    s += (i == 0 ? "" : i + 1 == rows.size() ? " and " : ", ") + rows[i]->strategy;
  return s;
}

std::string cell_with_spread(const StudyRow& row, const char* key, int digits) {
  double scale = 1, value = kNaN;
  for (const auto& c : measured_columns())
    if (std::string(c.key) == key) scale = c.scale, value = row.*c.field;
  const auto it = row.spread.find(key);
  if (it == row.spread.end()) return f(scale * value, digits);
  return f(scale * value, digits) + " (" + f(scale * it->second.first, digits) + "–" +
         f(scale * it->second.second, digits) + ")";
}

std::string study_summary(const std::vector<StudyRow>& rows) {
  if (rows.size() < 2) return "";
  std::vector<const StudyRow*> all;
  for (const auto& r : rows) all.push_back(&r);
  std::string out;
  const auto fast = fastest_rows(all);
  const StudyRow* worst = nullptr;
  for (const StudyRow* r : all)
    if (std::isfinite(r->step_ms) && (!worst || r->step_ms > worst->step_ms)) worst = r;
  const bool repeated = rows.front().repeats > 1;
  if (fast.size() == 1) {
    const StudyRow* best = fast.front();
    const StudyRow* next = nullptr;
    for (const StudyRow* r : all)
      if (r != best && std::isfinite(r->step_ms) && (!next || r->step_ms < next->step_ms)) next = r;
    if (next)
      out += best->strategy + " was fastest at " + f(best->step_ms) + " ms per iteration, " +
             f(100 * (next->step_ms / best->step_ms - 1)) + "% ahead of " + next->strategy + " and " +
             f(worst->step_ms / best->step_ms, 2) + "x faster than the slowest, " + worst->strategy + " (" +
             f(worst->step_ms) + " ms). ";
  } else if (!fast.empty()) {
    double lo = fast.front()->step_ms, hi = lo;
    for (const StudyRow* r : fast) lo = std::min(lo, r->step_ms), hi = std::max(hi, r->step_ms);
    out += "No single fastest: " + name_list(fast) + " tie at " + f(lo) + "–" + f(hi) + " ms per iteration (" +
           (repeated ? "their min–max ranges over " + std::to_string(rows.front().repeats) + " runs overlap"
                     : "within " + f(100 * kSingleRunNoise, 0) +
                           "%, the spread of two runs of one strategy here; --repeat N measures it") +
           ")";
    out +=
        fast.size() < all.size() ? "; the slowest was " + worst->strategy + " (" + f(worst->step_ms) + " ms). " : ". ";
  }
  const auto few = fewest_bytes_rows(all);
  if (few.size() == 1)
    out += few.front()->strategy + " moved the fewest bytes per worker (" + f(few.front()->sent_mb) + " MB sent). ";
  else if (!few.empty())
    out += name_list(few) + " tie for the fewest bytes per worker (" + f(few.front()->sent_mb) + " MB sent, within " +
           f(100 * kBytesTie, 0) + "%). ";
  std::string busy;
  for (const StudyRow* r : all)
    if (std::isfinite(r->sent_max_mb) && r->sent_mb > 0 && r->sent_max_mb > kHubFactor * r->sent_mb)
      busy += (busy.empty() ? "" : ", ") + r->strategy + "'s rank " + std::to_string(r->sent_max_rank) + " (" +
              f(r->sent_max_mb) + " MB, " + f(r->sent_max_mb / r->sent_mb, 1) + "x)";
  if (!busy.empty())
    out += "Ranks that sent over " + f(kHubFactor, 2) + "x their strategy's mean per worker: " + busy + ". ";
  // Which rows are exact is what each strategy registered (dist/sync/registry.h).
  std::string exact, inexact;
  for (const auto& r : rows) (dist::sync_spec_averages_gradients(r.strategy) ? exact : inexact) += ", " + r.strategy;
  if (!exact.empty())
    out += "Strategies that average gradients every step (" + exact.substr(2) +
           ") compute the same updates (to float rounding; bit for bit on 2 workers), so their losses agree";
  if (!inexact.empty())
    out += (exact.empty() ? "" : "; ") + inexact.substr(2) + " trade exactness for less communication";
  return out + ".";
}

}  // namespace ddl::apps
