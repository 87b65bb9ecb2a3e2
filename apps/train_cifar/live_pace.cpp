// train_cifar's live straggler report: the probes behind report/straggler.h's figures.
#include "apps/train_cifar/live_pace.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <ddl/cluster/link_rate.h>
#include <ddl/report/proc_parse.h>

namespace ddl::apps {

namespace {
// DDL_HOST_LINK is ddlrun's description of the link: "100mbit", "1gbit, delay 20ms", ...
double link_capacity_bytes_per_s() {
  const char* link = std::getenv("DDL_HOST_LINK");
  if (!link) return report::RankPace::kNaN;
  std::string rate = link;
  rate = rate.substr(0, rate.find_first_of(", "));
  const long long bits = ddl::cluster::link_rate_bits(rate);
  return bits > 0 ? static_cast<double>(bits) / 8 : report::RankPace::kNaN;
}
}  // namespace

LivePace::LivePace(const dist::ProcessGroup* group, int rank, int world)
    : group_(group),
      rank_(rank),
      world_(world),
      own_link_(std::getenv("DDL_HOST") != nullptr),
      capacity_(own_link_ ? link_capacity_bytes_per_s() : report::RankPace::kNaN),
      host_(report::pace_host_name()) {
  host_.resize(std::min<size_t>(host_.size(), report::kPaceHostChars));
  // The first window's link rates count from here.
  int64_t rx = -1, tx = -1;
  read_link(rx, tx);
  (void)window_.take(report::RankPace::kNaN, rx, tx, 0, capacity_);
  last_ = std::chrono::steady_clock::now();
}

void LivePace::read_link(int64_t& rx, int64_t& tx) const {
  if (own_link_) {
    if (const auto text = report::read_text_file("/proc/net/dev"))
      if (const auto net = report::parse_net_dev(*text)) rx = net->rx_bytes, tx = net->tx_bytes;
  } else if (group_) {
    const dist::CommStats s = group_->stats();
    rx = s.bytes_received(), tx = s.bytes_sent();
  }
}

std::vector<double> LivePace::outgoing(double step_s) {
  int64_t rx = -1, tx = -1;
  read_link(rx, tx);
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  const report::RankPace mine = window_.take(step_s, rx, tx, elapsed, capacity_);
  const bool first = !sent_host_;
  sent_host_ = true;
  return report::pack_pace(mine, rank_, world_, first ? &host_ : nullptr);
}

void LivePace::incoming(const std::vector<double>& summed) {
  ranks_ = report::unpack_pace(summed, world_, hosts_.empty() ? &hosts_ : nullptr);
  verdict_ = report::judge_pace(ranks_);
}

double LivePace::slowest_step_s() const {
  double most = report::RankPace::kNaN;
  for (const auto& p : ranks_)
    if (std::isfinite(p.step_s) && !(p.step_s <= most)) most = p.step_s;
  return most;
}

}  // namespace ddl::apps
