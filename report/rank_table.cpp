// Per-rank summary: pack to doubles, all_gather as one float64 tensor, print aligned.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <ddl/dist/process_group.h>
#include <ddl/report/rank_table.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::report {
namespace {

// What a field reads when it was not measured (a negative count or size).
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

double mb(int64_t bytes) { return bytes < 0 ? kUnknown : bytes / 1e6; }
double count(int64_t n) { return n < 0 ? kUnknown : static_cast<double>(n); }

struct Column {
  const char* header;
  RankField field;
  int decimals;
};

// Two tables so each fits a terminal; units in the headers (MB = 1e6 bytes).
const std::vector<Column> kResourceColumns = {
    {"cpu %", RankField::MeanCpuPercent, 1},    {"peak rss MB", RankField::PeakRssMB, 1},
    {"pg sent MB", RankField::PgSentMB, 2},     {"pg recv MB", RankField::PgRecvMB, 2},
    {"net rx MB", RankField::NetRxMB, 2},       {"net tx MB", RankField::NetTxMB, 2},
    {"lo rx MB", RankField::LoRxMB, 2},         {"lo tx MB", RankField::LoTxMB, 2},
    {"disk read MB", RankField::DiskReadMB, 2}, {"disk write MB", RankField::DiskWriteMB, 2},
};
// Counts are plain counts over the run, as the table's title says.
const std::vector<Column> kOsColumns = {
    {"vol ctx sw", RankField::VoluntarySwitches, 0},      {"invol ctx sw", RankField::InvoluntarySwitches, 0},
    {"minor faults", RankField::MinorFaults, 0},          {"major faults", RankField::MajorFaults, 0},
    {"throttled n", RankField::ThrottledPeriods, 0},      {"throttled ms", RankField::ThrottledMs, 1},
    {"tensor alloc MB", RankField::TensorAllocatedMB, 2}, {"tensor rsvd MB", RankField::TensorReservedMB, 2},
    {"tensor peak MB", RankField::TensorPeakMB, 2},
};
const std::vector<Column> kTimeColumns = {
    {"data ms", RankField::DataMs, 2},
    {"forward ms", RankField::ForwardMs, 2},
    {"backward ms", RankField::BackwardMs, 2},
    {"comm wait ms", RankField::CommWaitMs, 2},
    {"optimizer ms", RankField::OptimizerMs, 2},
    {"step ms", RankField::StepMs, 2},
    {"wall s", RankField::WallS, 1},
    {"converged s", RankField::ConvergenceS, 1},
    {"final acc %", RankField::FinalAccuracyPct, 2},
};

std::string cell(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pad_left(const std::string& s, size_t w) { return std::string(w > s.size() ? w - s.size() : 0, ' ') + s; }

// Mean over ranks of the values that are known; NaN when none is.
double mean_known(const std::vector<RankSummary>& ranks, RankField f) {
  double sum = 0;
  int n = 0;
  for (const auto& r : ranks)
    if (!std::isnan(r[f])) sum += r[f], ++n;
  return n ? sum / n : kUnknown;
}

std::string table(const std::vector<RankSummary>& ranks, const std::vector<Column>& cols) {
  std::vector<std::vector<std::string>> rows;  // first column: the rank label
  std::vector<std::string> head = {"rank"};
  for (const auto& c : cols) head.push_back(c.header);
  rows.push_back(head);
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::vector<std::string> row = {std::to_string(r)};
    for (const auto& c : cols) row.push_back(cell(ranks[r][c.field], c.decimals));
    rows.push_back(row);
  }
  if (ranks.size() > 1) {
    std::vector<std::string> row = {"mean"};
    for (const auto& c : cols) row.push_back(cell(mean_known(ranks, c.field), c.decimals));
    rows.push_back(row);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line = rows[k][0] + std::string(width[0] - rows[k][0].size(), ' ');
    for (size_t i = 1; i < rows[k].size(); ++i) line += "  " + pad_left(rows[k][i], width[i]);
    out += line + "\n";
    if (k == 0) out += std::string(line.size(), '-') + "\n";
  }
  return out;
}

}  // namespace

static_assert(static_cast<int>(RankField::TensorPeakMB) + 1 == kNumRankFields, "kNumRankFields: one per RankField");

RankSummary::RankSummary() { values.fill(kUnknown); }

RankSummary make_rank_summary(const ResourceSummary& res, const EpochTimes& times, const dist::CommStats* comm,
                              double convergence_s, double final_accuracy_pct, double wall_s) {
  RankSummary s;
  s[RankField::MeanCpuPercent] = res.mean_cpu_percent;
  s[RankField::PeakRssMB] = mb(res.peak_rss_bytes);
  if (comm) {
    s[RankField::PgSentMB] = mb(comm->bytes_sent());
    s[RankField::PgRecvMB] = mb(comm->bytes_received());
  }
  s[RankField::NetRxMB] = mb(res.net_rx_bytes);
  s[RankField::NetTxMB] = mb(res.net_tx_bytes);
  s[RankField::LoRxMB] = mb(res.lo_rx_bytes);
  s[RankField::LoTxMB] = mb(res.lo_tx_bytes);
  s[RankField::DiskReadMB] = mb(res.disk_read_bytes);
  s[RankField::DiskWriteMB] = mb(res.disk_write_bytes);
  if (res.disk_source != DiskSource::None) s[RankField::DiskSource] = static_cast<double>(res.disk_source);
  if (times.steps > 0) {
    s[RankField::DataMs] = 1e3 * times.mean.phase(Phase::Data);
    s[RankField::ForwardMs] = 1e3 * times.mean.phase(Phase::Forward);
    s[RankField::BackwardMs] = 1e3 * times.mean.phase(Phase::Backward);
    s[RankField::CommWaitMs] = 1e3 * times.mean.phase(Phase::CommWait);
    s[RankField::OptimizerMs] = 1e3 * times.mean.phase(Phase::Optimizer);
    s[RankField::StepMs] = 1e3 * times.mean.total_s;
  }
  s[RankField::ConvergenceS] = convergence_s;
  s[RankField::FinalAccuracyPct] = final_accuracy_pct;
  s[RankField::WallS] = wall_s;
  s[RankField::VoluntarySwitches] = count(res.os.voluntary_switches);
  s[RankField::InvoluntarySwitches] = count(res.os.involuntary_switches);
  s[RankField::MinorFaults] = count(res.os.minor_faults);
  s[RankField::MajorFaults] = count(res.os.major_faults);
  s[RankField::ThrottledPeriods] = count(res.os.throttled_periods);
  s[RankField::ThrottledMs] = res.os.throttled_us < 0 ? kUnknown : res.os.throttled_us / 1e3;
  s[RankField::TensorAllocatedMB] = mb(res.os.allocated_bytes);
  s[RankField::TensorReservedMB] = mb(res.os.reserved_bytes);
  s[RankField::TensorPeakMB] = mb(res.os.peak_allocated_bytes);
  return s;
}

std::vector<RankSummary> gather_rank_summaries(const RankSummary& mine, dist::ProcessGroup* pg) {
  if (pg == nullptr || pg->size() == 1) return {mine};
  const int world = pg->size();
  std::vector<double> v(mine.values.begin(), mine.values.end());
  Tensor in = from_vector(v, Shape{kNumRankFields});
  Tensor out = zeros(Shape{static_cast<int64_t>(world) * kNumRankFields}, DType::Float64);
  pg->all_gather(out, in);
  auto all = to_vector<double>(out);
  std::vector<RankSummary> ranks(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r)
    std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(r) * kNumRankFields, kNumRankFields,
                ranks[static_cast<size_t>(r)].values.begin());
  return ranks;
}

std::string format_rank_table(const std::vector<RankSummary>& ranks) {
  std::string out = "Per-rank resources (cpu: mean; rss: peak; bytes: totals over the run; MB = 1e6 bytes)\n";
  out += table(ranks, kResourceColumns);
  // Which counters the disk columns came from, once per kind present.
  std::set<int> sources;
  for (const auto& r : ranks)
    sources.insert(std::isnan(r[RankField::DiskSource]) ? -1 : static_cast<int>(r[RankField::DiskSource]));
  for (int src : sources)
    out += std::string("disk: ") +
           (src == 0   ? "read_bytes/write_bytes from /proc/self/io (bytes that reached storage)"
            : src == 1 ? "rchar/wchar from /proc/self/io (all read()/write() bytes, sockets included)"
                       : "n/a (/proc/self/io unreadable)") +
           "\n";
  out +=
      "net: host-wide counters from /proc/net/dev (other processes' traffic included); "
      "ranks on one machine talk over lo\n\n";
  out +=
      "Per-rank OS figures (getrusage and cgroup cpu.stat: counts and ms over the run; tensor allocator "
      "(CPU): at the end, MB = 1e6 bytes)\n" +
      table(ranks, kOsColumns);
  out +=
      "throttled: cpu.stat of the nearest cgroup with a CPU quota (every process in it); n/a when none has "
      "one\n\n";
  out += "Per-rank step times (mean per step, first step of each epoch excluded)\n" + table(ranks, kTimeColumns);
  return out;
}

void print_rank_table(const RankSummary& mine, dist::ProcessGroup* pg, std::ostream& os) {
  auto ranks = gather_rank_summaries(mine, pg);
  if (pg == nullptr || pg->rank() == 0) os << format_rank_table(ranks) << std::flush;
}

void ConvergenceTracker::record(double elapsed_s, double accuracy_pct) {
  if (target_ > 0 && std::isnan(time_s_) && accuracy_pct >= target_) time_s_ = elapsed_s;
}

}  // namespace ddl::report
