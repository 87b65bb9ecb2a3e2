// Live straggler figures: the window, the wire format and the verdict (report/straggler.h).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <ddl/report/straggler.h>

namespace ddl::report {

namespace {

bool known(double x) { return std::isfinite(x); }

// The median of the finite values; NaN when there is none.
double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !known(x); }), v.end());
  if (v.empty()) return RankPace::kNaN;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The others' median of `f` (every rank but `skip`).
template <class F>
double others_median(const std::vector<RankPace>& ranks, int skip, F f) {
  std::vector<double> v;
  for (size_t r = 0; r < ranks.size(); ++r)
    if (static_cast<int>(r) != skip) v.push_back(f(ranks[r]));
  return median(v);
}

std::string printf_string(const char* f, double a, double b = 0, double c = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

double RankPace::link_use() const {
  if (!known(link_capacity_bytes_per_s) || link_capacity_bytes_per_s <= 0) return kNaN;
  if (!known(link_rx_bytes_per_s) && !known(link_tx_bytes_per_s)) return kNaN;
  const double busier = std::max(known(link_rx_bytes_per_s) ? link_rx_bytes_per_s : 0.0,
                                 known(link_tx_bytes_per_s) ? link_tx_bytes_per_s : 0.0);
  return busier / link_capacity_bytes_per_s;
}

void PaceWindow::add_step(const StepTimes& t) {
  ++steps_;
  total_s_ += t.total_s;
  data_s_ += t.phase(Phase::Data);
  compute_s_ += t.phase(Phase::Forward) + t.phase(Phase::Backward) + t.phase(Phase::Optimizer);
  wait_s_ += t.phase(Phase::CommWait);
}

RankPace PaceWindow::take(double step_s, int64_t rx, int64_t tx, double elapsed_s, double capacity) {
  RankPace p;
  p.step_s = step_s;
  if (steps_ > 0) {
    const double n = static_cast<double>(steps_);
    p.mean_step_s = total_s_ / n, p.data_s = data_s_ / n, p.compute_s = compute_s_ / n, p.wait_s = wait_s_ / n;
  }
  // The first window has no earlier reading: its rates stay unknown.
  if (rx >= 0 && last_rx_ >= 0 && elapsed_s > 0) p.link_rx_bytes_per_s = double(rx - last_rx_) / elapsed_s;
  if (tx >= 0 && last_tx_ >= 0 && elapsed_s > 0) p.link_tx_bytes_per_s = double(tx - last_tx_) / elapsed_s;
  p.link_capacity_bytes_per_s = capacity;
  last_rx_ = rx, last_tx_ = tx;
  steps_ = 0;
  total_s_ = data_s_ = compute_s_ = wait_s_ = 0;
  return p;
}

std::vector<double> pack_pace(const RankPace& p, int rank, int world, const std::string* host) {
  std::vector<double> v(static_cast<size_t>(world) * (kPaceFields + (host ? kPaceHostChars : 0)), 0.0);
  double* mine = v.data() + static_cast<size_t>(rank) * kPaceFields;
  const double fields[kPaceFields] = {p.step_s,
                                      p.mean_step_s,
                                      p.data_s,
                                      p.compute_s,
                                      p.wait_s,
                                      p.link_rx_bytes_per_s,
                                      p.link_tx_bytes_per_s,
                                      p.link_capacity_bytes_per_s};
  std::copy(fields, fields + kPaceFields, mine);
  if (host) {
    double* name = v.data() + static_cast<size_t>(world) * kPaceFields + static_cast<size_t>(rank) * kPaceHostChars;
    for (size_t i = 0; i < host->size() && i < static_cast<size_t>(kPaceHostChars); ++i)
      name[i] = static_cast<unsigned char>((*host)[i]);  // a byte is exact in a double, and 0 ends the name
  }
  return v;
}

std::vector<RankPace> unpack_pace(const std::vector<double>& v, int world, std::vector<std::string>* hosts) {
  std::vector<RankPace> out(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    const double* f = v.data() + static_cast<size_t>(r) * kPaceFields;
    RankPace& p = out[static_cast<size_t>(r)];
    p.step_s = f[0], p.mean_step_s = f[1], p.data_s = f[2], p.compute_s = f[3], p.wait_s = f[4];
    p.link_rx_bytes_per_s = f[5], p.link_tx_bytes_per_s = f[6], p.link_capacity_bytes_per_s = f[7];
  }
  const size_t names = static_cast<size_t>(world) * kPaceHostChars;
  if (hosts && v.size() == static_cast<size_t>(world) * kPaceFields + names) {
    hosts->assign(static_cast<size_t>(world), "");
    for (int r = 0; r < world; ++r)
      for (int i = 0; i < kPaceHostChars; ++i) {
        const double c = v[static_cast<size_t>(world) * kPaceFields + static_cast<size_t>(r) * kPaceHostChars + i];
        if (c < 1 || c > 255) break;
        (*hosts)[static_cast<size_t>(r)] += static_cast<char>(static_cast<unsigned char>(c));
      }
  }
  return out;
}

PaceVerdict judge_pace(const std::vector<RankPace>& ranks) {
  PaceVerdict v;
  const int n = static_cast<int>(ranks.size());
  if (n < 2) return v;
  double most = -1;
  for (int r = 0; r < n; ++r)
    if (known(ranks[r].busy_s()) && ranks[r].busy_s() > most) most = ranks[r].busy_s(), v.slowest = r;
  if (v.slowest >= 0) {
    const RankPace& p = ranks[static_cast<size_t>(v.slowest)];
    v.others_wait_s = others_median(ranks, v.slowest, [](const RankPace& q) { return q.wait_s; });
    const double others_busy = others_median(ranks, v.slowest, [](const RankPace& q) { return q.busy_s(); });
    v.straggler = known(others_busy) && p.busy_s() >= 1.5 * others_busy && p.busy_s() > p.wait_s;
  }

  // The link: by its share of capacity when every rank knows its link's, else bytes/s.
  v.by_capacity = std::all_of(ranks.begin(), ranks.end(), [](const RankPace& p) { return known(p.link_use()); });
  if (v.by_capacity) {
    int busiest = 0;
    for (int r = 1; r < n; ++r)
      if (ranks[r].link_use() > ranks[busiest].link_use()) busiest = r;
    const double use = ranks[busiest].link_use();
    const double peers = others_median(ranks, busiest, [](const RankPace& p) { return p.link_use(); });
    if (use >= 0.5 && known(peers) && use >= 2 * peers)
      v.slow_link = busiest, v.link_figure = use, v.peers_figure = peers;
    return v;
  }
  const auto rate = [](const RankPace& p) { return p.link_rx_bytes_per_s + p.link_tx_bytes_per_s; };
  int least = -1;
  for (int r = 0; r < n; ++r)
    if (known(rate(ranks[r])) && (least < 0 || rate(ranks[r]) < rate(ranks[least]))) least = r;
  if (least < 0) return v;
  const double peers = others_median(ranks, least, rate);
  if (known(peers) && peers > 0 && rate(ranks[least]) < 0.5 * peers)
    v.slow_link = least, v.link_figure = rate(ranks[least]), v.peers_figure = peers;
  return v;
}

std::string rank_label(int rank, const std::vector<std::string>& hosts) {
  std::string s = "rank " + std::to_string(rank);
  if (rank >= 0 && static_cast<size_t>(rank) < hosts.size() && !hosts[static_cast<size_t>(rank)].empty())
    s += " (" + hosts[static_cast<size_t>(rank)] + ")";
  return s;
}

namespace {
std::string link_text(const PaceVerdict& v, const std::vector<std::string>& hosts, bool long_form) {
  if (v.slow_link < 0) return "";
  std::string s = "slow link " + rank_label(v.slow_link, hosts);
  if (v.by_capacity)
    return s + printf_string(long_form ? " %.0f%% busy, its peers' %.0f%% (median)" : " %.0f%% busy",
                             100 * v.link_figure, 100 * v.peers_figure);
  return s + printf_string(long_form ? " carries %.2f MB/s, its peers %.2f MB/s (median)" : " %.2f MB/s",
                           v.link_figure / 1e6, v.peers_figure / 1e6);
}
}  // namespace

std::string pace_status(const PaceVerdict& v, const std::vector<RankPace>& ranks,
                        const std::vector<std::string>& hosts) {
  std::string s;
  if (v.slowest >= 0) {
    const RankPace& p = ranks[static_cast<size_t>(v.slowest)];
    const double share = known(p.mean_step_s) && p.mean_step_s > 0 ? 100 * p.compute_s / p.mean_step_s : RankPace::kNaN;
    s = (v.straggler ? "slowest " : "no straggler, busiest ") + rank_label(v.slowest, hosts) +
        printf_string(" %.3f s/step", p.mean_step_s);
    if (known(share)) s += printf_string(", %.0f%% compute", share);
  }
  const std::string link = link_text(v, hosts, false);
  if (!link.empty()) s += (s.empty() ? "" : "; ") + link;
  return s;
}

std::string pace_sentence(const PaceVerdict& v, const std::vector<RankPace>& ranks,
                          const std::vector<std::string>& hosts) {
  std::string s;
  if (v.slowest >= 0) {
    const RankPace& p = ranks[static_cast<size_t>(v.slowest)];
    s = (v.straggler ? "slowest " : "no straggler; the busiest is ") + rank_label(v.slowest, hosts) +
        printf_string(": compute %.3f s, wait %.3f s per step", p.compute_s, p.wait_s) +
        printf_string("; the others wait %.3f s (median)", v.others_wait_s);
  }
  const std::string link = link_text(v, hosts, true);
  if (!link.empty()) s += (s.empty() ? "" : "; ") + link;
  return s;
}

nlohmann::json pace_json(const PaceVerdict& v, const std::vector<RankPace>& ranks,
                         const std::vector<std::string>& hosts) {
  // NaN has no JSON form: unknown values are null.
  const auto num = [](double x) { return known(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  const auto host = [&](int r) {
    return r >= 0 && static_cast<size_t>(r) < hosts.size() ? nlohmann::json(hosts[static_cast<size_t>(r)])
                                                           : nlohmann::json(nullptr);
  };
  nlohmann::json per_rank = nlohmann::json::array();
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankPace& p = ranks[r];
    per_rank.push_back({{"rank", r},
                        {"host", host(static_cast<int>(r))},
                        {"step_s", num(p.mean_step_s)},
                        {"data_s", num(p.data_s)},
                        {"compute_s", num(p.compute_s)},
                        {"wait_s", num(p.wait_s)},
                        {"busy_s", num(p.busy_s())},
                        {"link_rx_bytes_per_s", num(p.link_rx_bytes_per_s)},
                        {"link_tx_bytes_per_s", num(p.link_tx_bytes_per_s)},
                        {"link_capacity_bytes_per_s", num(p.link_capacity_bytes_per_s)},
                        {"link_use", num(p.link_use())}});
  }
  nlohmann::json j = {{"slowest_rank", v.slowest >= 0 ? nlohmann::json(v.slowest) : nlohmann::json(nullptr)},
                      {"slowest_host", host(v.slowest)},
                      {"straggler", v.straggler},
                      {"others_wait_s", num(v.others_wait_s)},
                      {"ranks", per_rank}};
  if (v.slowest >= 0) {
    j["slowest_compute_s"] = num(ranks[static_cast<size_t>(v.slowest)].compute_s);
    j["slowest_wait_s"] = num(ranks[static_cast<size_t>(v.slowest)].wait_s);
  }
  j["slow_link"] = v.slow_link < 0 ? nlohmann::json(nullptr)
                                   : nlohmann::json{{"rank", v.slow_link},
                                                    {"host", host(v.slow_link)},
                                                    {"measure", v.by_capacity ? "link_use" : "bytes_per_s"},
                                                    {"value", num(v.link_figure)},
                                                    {"peers_median", num(v.peers_figure)}};
  return j;
}

std::string pace_host_name() {
  if (const char* h = std::getenv("DDL_HOST"); h && *h) return h;
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace ddl::report
