// Stragglers named while they happen: each rank's pace over the last few steps (step time,
// compute, waiting for peers, bytes per second on its link) travels in one small float64
// vector that the ranks all-reduce (sum; each rank fills only its own slot) on the steps
// where train_cifar already exchanges the slowest step time, and every rank then judges it
// alike: which rank is slowest and whether compute or waiting fills its steps, and which
// link runs nearest its capacity compared with its peers'. No collective of its own here.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ddl/report/step_timer.h>

namespace ddl::report {

// One rank's figures, NaN where unknown. Times are means per step over the window.
struct RankPace {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double step_s = kNaN;  // the step time the slowest-rank exchange always sent
  double mean_step_s = kNaN, data_s = kNaN, compute_s = kNaN, wait_s = kNaN;  // window means
  double link_rx_bytes_per_s = kNaN, link_tx_bytes_per_s = kNaN;              // bytes the link carried per second
  double link_capacity_bytes_per_s = kNaN;                                    // each way; NaN or 0: unknown
  // Busy time per step: all but waiting for peers (data, compute, the rest of the step).
  double busy_s() const { return mean_step_s - wait_s; }
  // The busier direction's share of the link's capacity, NaN when the capacity is unknown.
  double link_use() const;
};
inline constexpr int kPaceFields = 8;      // the doubles of one RankPace on the wire
inline constexpr int kPaceHostChars = 32;  // a host name's bytes on the first exchange

// Collects one rank's closed steps and link counters between exchanges.
class PaceWindow {
 public:
  // One closed step's phases: compute = forward + backward + optimizer, wait = comm_wait.
  void add_step(const StepTimes& t);
  // The window's means, then starts a new window. link_rx/tx_bytes: the link's counters now
  // (cumulative, any origin; negative: unknown); elapsed_s: seconds since the last take().
  RankPace take(double step_s, int64_t link_rx_bytes, int64_t link_tx_bytes, double elapsed_s,
                double capacity_bytes_per_s);

 private:
  int64_t steps_ = 0;
  double total_s_ = 0, data_s_ = 0, compute_s_ = 0, wait_s_ = 0;
  int64_t last_rx_ = -1, last_tx_ = -1;
};

// The vector rank `rank` all-reduces (sum): world slots of kPaceFields doubles, its own
// filled, the rest zero; with `host` non-null, then world slots of kPaceHostChars for the
// host names (the first exchange only: names do not change). Every rank must pass a host
// on the same exchanges, so that the lengths agree.
std::vector<double> pack_pace(const RankPace& mine, int rank, int world, const std::string* host = nullptr);
// The all-reduced vector back as every rank's pace; `hosts` is filled when it carries names.
std::vector<RankPace> unpack_pace(const std::vector<double>& v, int world, std::vector<std::string>* hosts);

// What every rank concludes from the same figures.
struct PaceVerdict {
  int slowest = -1;                       // the rank with the most busy time per step
  bool straggler = false;                 // it holds the others up: busy 1.5x their median, and more busy than waiting
  double others_wait_s = RankPace::kNaN;  // the median of the other ranks' waits
  int slow_link = -1;  // a rank whose link is far busier (or, capacity unknown, far slower) than its peers'
  double link_figure = RankPace::kNaN, peers_figure = RankPace::kNaN;  // its use vs the others' median
  bool by_capacity = false;  // figures are shares of capacity (else bytes per second)
};
// slowest: -1 with fewer than two ranks or without times; a straggler when its busy time
// is at least 1.5 times the others' median and more than its own wait (a rank that mostly
// waits too is merely the busiest of equals: the network holds them all). slow_link: with every capacity
// known, the rank whose link use is >= 50% and >= twice the others' median; else the
// rank carrying under half the others' median bytes per second.
PaceVerdict judge_pace(const std::vector<RankPace>& ranks);

// "rank 2 (host2)", or "rank 2" when the host is unknown.
std::string rank_label(int rank, const std::vector<std::string>& hosts);
// The progress bar's short form: "slowest rank 2 (host2) 0.31 s/step, 94% compute;
// slow link rank 1 (host1) 96% busy". Empty without a verdict.
std::string pace_status(const PaceVerdict& v, const std::vector<RankPace>& ranks,
                        const std::vector<std::string>& hosts);
// The step line's long form: compute and wait of the slowest, the others' wait, the link.
std::string pace_sentence(const PaceVerdict& v, const std::vector<RankPace>& ranks,
                          const std::vector<std::string>& hosts);
// The metrics "pace" event's fields: the verdict and one object per rank.
nlohmann::json pace_json(const PaceVerdict& v, const std::vector<RankPace>& ranks,
                         const std::vector<std::string>& hosts);

// This process's host: DDL_HOST (ddlrun --hosts' emulated host), else gethostname(2).
std::string pace_host_name();

}  // namespace ddl::report
