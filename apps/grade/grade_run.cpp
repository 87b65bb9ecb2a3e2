// Launching a case under a deadline and scoring it (see grade_run.h).
#include "apps/grade/grade_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "apps/grade/ddp_checks.h"
#include "apps/grade/fault_case.h"
#include "apps/grade/link_check.h"
#include <ddl/trace/atomic_file.h>

namespace ddl::grade {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t;
}

// The last `n` lines of a file: what ddlrun said last about a run whose ranks left no result.
std::string tail_of(const fs::path& p, size_t n) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > n) lines.erase(lines.begin());
  }
  std::string s;
  for (const auto& l : lines) s += (s.empty() ? "" : "\n") + l;
  return s;
}

std::vector<float> read_floats(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// Note [Killing a run]
// ddlrun stops its workers on SIGTERM (after --grace seconds, SIGKILL) and exits; the
// grader gives it that long, then SIGKILLs ddlrun's process group. A worker that still
// outlives both ends at its own alarm (main.cpp), so no run leaves ranks behind.
struct Launch {
  bool finished = false;  // ddlrun exited before the deadline
  int status = 0;
  double seconds = 0;
};

Launch launch(const std::vector<std::string>& argv, const std::string& log, double timeout_s) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Opened here, not in the child: files::open_for_writing refuses a link planted at the
  // log's name or a FIFO, with an error this process can report.
  const int log_fd = files::open_for_writing(log, O_WRONLY | O_CREAT | O_TRUNC, "ddl-grade");
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(log_fd);
  Launch out;
  if (pid < 0) return out;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int status = 0;
  while (elapsed() < timeout_s) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      out.finished = true;
      out.status = status;
      out.seconds = elapsed();
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  out.seconds = elapsed();
  kill(pid, SIGTERM);  // See Note [Killing a run]
  for (int i = 0; i < 150 && waitpid(pid, &status, WNOHANG) != pid; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(-pid, SIGKILL);
  waitpid(pid, &status, 0);
  return out;
}

std::string ranks_list(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

std::vector<Check> grade_case(const Lab& lab, const Case& c, int index, const RunConfig& cfg) {
  const std::string tag = (c.hidden_case ? "hidden case " : "case ") + std::to_string(index);
  const fs::path dir = fs::path(cfg.workdir) / ("case" + std::to_string(index));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> argv = {cfg.ddlrun,
                                   cfg.hosts ? "--hosts" : "--nproc",
                                   std::to_string(c.ranks),
                                   "--master-port",
                                   "0",
                                   "--grace",
                                   "1",
                                   "--timeout",
                                   std::to_string(int(cfg.timeout_s) + 30),
                                   "--log-dir",
                                   (dir / "logs").string(),
                                   cfg.self,
                                   "--worker",
                                   "--strategy",
                                   cfg.strategy,
                                   "--case",
                                   c.to_args(),
                                   "--dir",
                                   dir.string(),
                                   "--timeout",
                                   std::to_string(cfg.timeout_s),
                                   "--lab",
                                   lab.id};
  for (const auto& p : cfg.plugins) argv.insert(argv.end(), {"--plugin", p});
  if (!c.fault.empty()) {  // lab fault: one restart, and the kill plan for the worker
    argv.insert(argv.begin() + 1, {"--max-restarts", "1"});
    argv.insert(argv.end(), {"--fault", c.fault});
  }
  // ddlrun --hosts wants a link; without --link the grader gives one too fast to matter.
  if (cfg.hosts) argv.insert(argv.begin() + 1, {"--link", cfg.link.empty() ? std::string("10gbit") : cfg.link});
  const Launch run = launch(argv, (dir / "ddlrun.log").string(), cfg.timeout_s);

  auto mk = [&](const std::string& what) {
    Check k;
    k.name = tag + " (" + c.describe() + "): " + what;
    k.hidden = c.hidden_case;
    return k;
  };
  std::vector<Check> checks;
  // (d) the run ends in time, every rank without an error.
  Check done = mk("every rank finishes within " + std::to_string(int(cfg.timeout_s)) + " s");
  std::vector<int> missing;
  std::string errors;
  for (int r = 0; r < c.ranks; ++r) {
    const fs::path err = dir / ("rank" + std::to_string(r) + ".error");
    if (fs::exists(err))
      errors += (errors.empty() ? "" : "\n") + ("rank " + std::to_string(r) + " failed: " + slurp(err));
    else if (!fs::exists(dir / ("rank" + std::to_string(r) + ".json")))
      missing.push_back(r);
  }
  if (!run.finished) {
    done.output = "the run did not end within " + std::to_string(int(cfg.timeout_s)) + " s: rank" +
                  (missing.size() == 1 ? " " : "s ") + ranks_list(missing) +
                  " had not finished (a deadlock? a send that no rank receives, or a receive from the wrong peer "
                  "or with the wrong tag); the grader killed the run." +
                  (errors.empty() ? "" : "\n" + errors);
  } else if (!errors.empty() || !missing.empty()) {
    done.output = errors;
    if (!missing.empty())  // died without a word: a crash, an exit() or a signal
      done.output +=
          (errors.empty() ? "" : "\n") + ("rank" + std::string(missing.size() == 1 ? " " : "s ") + ranks_list(missing) +
                                          " ended without a result (a crash?); the launcher's last "
                                          "lines:\n" +
                                          tail_of(dir / "ddlrun.log", 8));
  } else {
    done.score = 1;
    done.output = "all " + std::to_string(c.ranks) + " ranks finished";
  }
  checks.push_back(done);
  const bool ok = done.score == 1;
  const std::string skipped = "not checked: the run failed or did not finish (see the check above)";

  // (a) equal to one process on the whole batch.
  Check equal = mk("weights equal one process on the whole batch (relative tolerance " +
                   (std::ostringstream() << lab.tolerance).str() + ")");
  // (b) identical replicas.
  Check same = mk("every rank holds bit-identical weights");
  // (c) bytes per rank.
  Check bytes = mk("bytes sent and received per rank: " + lab.formula);
  Check p2p = mk("only send and recv move the gradient");
  Check buckets =
      mk("all_reduce calls per step: the handout's buckets for a cap of " + std::to_string(c.cap) + " bytes");
  Check overlap = mk("an all_reduce starts while backward still runs");
  Check link = mk("link use: no rank moves its bytes faster than " + cfg.link + " allows");
  if (!ok) {
    equal.output = same.output = bytes.output = p2p.output = buckets.output = overlap.output = link.output = skipped;
  } else {
    const auto ref = read_floats(dir / "reference.bin");
    std::vector<std::vector<float>> w;
    for (int r = 0; r < c.ranks; ++r) w.push_back(read_floats(dir / ("rank" + std::to_string(r) + ".bin")));
    double worst = 0;
    int worst_rank = 0;
    size_t worst_at = 0;
    for (int r = 0; r < c.ranks; ++r)
      for (size_t i = 0; i < ref.size() && i < w[r].size(); ++i) {
        const double d = std::abs(double(w[r][i]) - ref[i]) / (std::abs(double(ref[i])) + 1e-3);
        if (!(d <= worst)) worst = d, worst_rank = r, worst_at = i;  // NaN wins
      }
    if (worst <= lab.tolerance) {
      equal.score = 1;
      equal.output = (std::ostringstream() << "largest relative difference " << worst).str();
    } else {
      equal.output =
          (std::ostringstream() << "rank " << worst_rank << "'s weight " << worst_at << " is "
                                << w[worst_rank][worst_at] << " where one process on the whole batch has "
                                << ref[worst_at] << " (relative difference " << worst << ", allowed " << lab.tolerance
                                << "): is every rank's gradient summed once and divided by N?")
              .str();
    }
    same.score = 1;
    same.output = "all ranks equal bit for bit";
    for (int r = 1; r < c.ranks && same.score == 1; ++r)
      for (size_t i = 0; i < w[0].size(); ++i)
        if (std::memcmp(&w[0][i], &w[r][i], sizeof(float)) != 0) {
          same.score = 0;
          same.output = (std::ostringstream() << std::setprecision(9) << "ranks 0 and " << r << " differ at weight "
                                              << i << " (" << w[0][i] << " vs " << w[r][i]
                                              << "): every rank must end with the same bits, so add the "
                                                 "gradients in the same order everywhere (or let one rank add "
                                                 "and send the result)")
                            .str();
          break;
        }
    std::vector<RankTraffic> traffic;
    std::vector<nlohmann::json> jsons;
    for (int r = 0; r < c.ranks; ++r) {
      const auto j = nlohmann::json::parse(slurp(dir / ("rank" + std::to_string(r) + ".json")));
      RankTraffic t;
      t.sent = j["sent"].get<int64_t>(), t.received = j["received"].get<int64_t>();
      t.other_ops = j["other_ops"].get<std::string>();
      t.bucket_sent = j.value("bucket_sent", int64_t(0)), t.bucket_received = j.value("bucket_received", int64_t(0));
      traffic.push_back(t);
      jsons.push_back(j);
    }
    bytes.score = 1;
    bytes.output = "every rank moved the bytes of the formula";
    p2p.score = 1;
    p2p.output = "no collective calls";
    for (int r = 0; r < c.ranks; ++r) {
      const std::string why = check_bytes(lab, r, c.ranks, c.parameters() * 4, c.steps, traffic);
      if (!why.empty() && bytes.score == 1) bytes.score = 0, bytes.output = "rank " + std::to_string(r) + " " + why;
      if (!traffic[r].other_ops.empty() && p2p.score == 1)
        p2p.score = 0, p2p.output = "rank " + std::to_string(r) + " called collectives (" + traffic[r].other_ops +
                                    "): this lab asks for send and recv only";
    }
    if (!cfg.link.empty()) {
      std::vector<double> seconds;
      for (const auto& j : jsons) seconds.push_back(j.value("loop_seconds", 0.0));
      link = check_link(c, traffic, seconds, cfg.link, link);
    }
    if (lab.id == "ddp-buckets") {
      buckets = check_buckets(c, jsons, buckets);
      overlap = check_overlap(c, jsons, overlap);
    }
  }
  if (!c.fault.empty()) {  // lab fault: agreement and atomic writes instead of bytes
    if (ok && equal.score == 0) equal.output += " Or, after the restart, was a rank's state not the agreed step's?";
    checks.insert(checks.end(), {equal, same});
    for (const auto& k : fault_checks(c, dir, mk)) checks.push_back(k);
    return checks;
  }
  checks.insert(checks.end(), {equal, same, bytes});
  if (lab.p2p_only) checks.push_back(p2p);
  if (lab.id == "ddp-buckets") checks.insert(checks.end(), {buckets, overlap});
  if (lab.p2p_only && !cfg.link.empty()) checks.push_back(link);
  return checks;
}

}  // namespace ddl::grade
