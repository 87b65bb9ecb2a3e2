// train_cifar's live straggler report (report/straggler.h): this rank's window of step
// times and its link counters go out on the slowest-rank exchange, and every rank keeps
// the job's figures and verdict for the progress bar, the step lines and the "pace"
// metrics line. The link is the emulated host's interface under ddlrun --hosts (its own
// network namespace, capacity from DDL_HOST_LINK), else the process group's payload bytes.
// It runs no collective itself: RunReport all-reduces what outgoing() returns.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ddl/dist/process_group.h>
#include <ddl/report/straggler.h>

namespace ddl::apps {

class LivePace {
 public:
  LivePace(const dist::ProcessGroup* group, int rank, int world);
  void add_step(const report::StepTimes& t) { window_.add_step(t); }
  // This rank's slot of the exchange (host names on the first one); step_s: the step time
  // the exchange always sent.
  std::vector<double> outgoing(double step_s);
  // The summed vector from every rank: updates the figures and the verdict.
  void incoming(const std::vector<double>& summed);
  bool ready() const { return !ranks_.empty(); }
  double slowest_step_s() const;  // the most step_s any rank sent; NaN before an exchange
  std::string status() const { return ready() ? report::pace_status(verdict_, ranks_, hosts_) : ""; }
  std::string sentence() const { return ready() ? report::pace_sentence(verdict_, ranks_, hosts_) : ""; }
  nlohmann::json json() const { return report::pace_json(verdict_, ranks_, hosts_); }

 private:
  // The link's cumulative bytes in and out; -1 where unknown.
  void read_link(int64_t& rx, int64_t& tx) const;

  const dist::ProcessGroup* group_;
  int rank_, world_;
  bool own_link_;     // an emulated host: /proc/net/dev counts its link alone
  double capacity_;   // bytes per second each way; NaN: unknown
  std::string host_;  // this rank's, sent once
  report::PaceWindow window_;
  std::chrono::steady_clock::time_point last_;
  bool sent_host_ = false;
  std::vector<std::string> hosts_;
  std::vector<report::RankPace> ranks_;
  report::PaceVerdict verdict_;
};

}  // namespace ddl::apps
