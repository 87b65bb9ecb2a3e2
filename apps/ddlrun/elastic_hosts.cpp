// The emulated elastic job's supervisor (see elastic_hosts.h): forks one agent per powered
// host, applies the power events on time, forwards SIGINT/SIGTERM, and waits for the agents.
#include "apps/ddlrun/elastic_hosts.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "apps/ddlrun/node_command.h"
#include <ddl/cluster/cluster.h>
#include <ddl/cluster/network.h>

namespace ddl::launcher::elastic {

namespace {
volatile sig_atomic_t g_stop = 0;
void on_stop(int sig) { g_stop = sig; }
}  // namespace

PowerEvent parse_power_event(const std::string& text, bool on, int hosts) {
  const char* flag = on ? "--power-on" : "--power-off";
  const size_t eq = text.find('=');
  PowerEvent e;
  e.on = on;
  try {
    if (text.rfind("host", 0) != 0 || eq == std::string::npos) throw std::invalid_argument("");
    size_t used = 0;
    e.host = std::stoi(text.substr(4, eq - 4), &used);
    if (used != eq - 4) throw std::invalid_argument("");
    e.at_s = std::stod(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(flag) + " " + text + ": expected hostI=SECONDS, e.g. host1=5");
  }
  if (e.host < 0 || e.host >= hosts || !(e.at_s >= 0 && e.at_s < 1e6))
    throw std::invalid_argument(std::string(flag) + " " + text + ": host outside host0..host" +
                                std::to_string(hosts - 1) + ", or a time outside [0, 1e6) s");
  return e;
}

namespace {
// New complete lines of `path` after `offset` (advanced past them).
std::vector<std::string> new_lines(const std::string& path, long& offset) {
  std::vector<std::string> lines;
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return lines;
  std::fseek(f, offset, SEEK_SET);
  char buf[256];
  while (std::fgets(buf, sizeof buf, f)) {
    std::string line(buf);
    if (line.empty() || line.back() != '\n') break;  // unfinished: read it whole next time
    offset += static_cast<long>(line.size());
    line.pop_back();
    lines.push_back(line);
  }
  std::fclose(f);
  return lines;
}
}  // namespace

int run_hosts(const Config& cfg, ddl::cluster::Cluster& cluster, int hosts_count, ElasticSpec spec,
              std::vector<PowerEvent> events, const std::string& control) {
  using Clock = std::chrono::steady_clock;
  const int n = hosts_count;
  std::string token = random_token();
  spec.candidates.clear();
  for (int h = 0; h < n; ++h) spec.candidates.push_back(ddl::cluster::host_address(h));
  std::stable_sort(events.begin(), events.end(), [](auto& a, auto& b) { return a.at_s < b.at_s; });
  std::vector<bool> starts_off(n, false), seen(n, false);
  for (const PowerEvent& e : events)
    if (!seen[e.host]) seen[e.host] = true, starts_off[e.host] = e.on;
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  const sigset_t stops = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);

  std::vector<pid_t> agent(n, -1);  // the relay left by enter(): it exits with the agent
  auto start_agent = [&](int h) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid > 0) {
      agent[h] = pid;
      return;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // an agent must not outlive ddlrun
    cluster.enter(h);                  // returns in the host's namespaces, a child of the relay
    Config c = cfg;
    c.cluster = nullptr;  // already inside the host: workers start here as on a real node
    c.extra_env = {{"DDL_GLOO_IFACE", ddl::cluster::kHostIface},
                   {"DDL_HOST", cluster.host_name(h)},
                   {"DDL_HOST_LINK", cluster.link_description(h)}};
    ElasticSpec s = spec;
    s.node_id = h;
    int rc = 1;
    try {
      rc = run_agent(c, s, token);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ddlrun: elastic: %s's agent: %s\n", cluster.host_name(h).c_str(), e.what());
    }
    std::fflush(nullptr);
    _exit(rc);  // no destructors: the cluster belongs to the parent
  };
  for (int h = 0; h < n; ++h)
    if (!starts_off[h]) start_agent(h);
  for (int h = 0; h < n; ++h)
    if (starts_off[h]) cluster.power_off(h);
  const Clock::time_point t0 = Clock::now();
  size_t next = 0;
  long control_offset = 0;
  int result = -1;  // the first exit status of an agent that was not powered off
  bool stopping = false;
  while (true) {
    const double now = std::chrono::duration<double>(Clock::now() - t0).count();
    // --power-control lines act now: appended to the timed events, in order.
    if (!control.empty() && !stopping)
      for (const std::string& line : new_lines(control, control_offset)) {
        const bool on = line.rfind("on ", 0) == 0;
        try {
          if (!on && line.rfind("off ", 0) != 0) throw std::invalid_argument("");
          PowerEvent e = parse_power_event(line.substr(on ? 3 : 4) + "=0", on, n);
          e.at_s = now;
          events.insert(events.begin() + static_cast<long>(next), e);
        } catch (const std::exception&) {
          std::fprintf(stderr, "ddlrun: --power-control %s: ignoring \"%s\" (expected \"off hostI\" or \"on hostI\")\n",
                       control.c_str(), line.c_str());
        }
      }
    while (!stopping && next < events.size() && events[next].at_s <= now) {
      const PowerEvent& e = events[next++];
      const std::string name = cluster.host_name(e.host);
      if (e.on == cluster.powered(e.host)) continue;
      std::fprintf(stderr, "ddlrun: --power-%s: %s %s at %.1f s\n", e.on ? "on" : "off", name.c_str(),
                   e.on ? "starts" : "loses power", now);
      if (e.on) {
        cluster.power_on(e.host);
        start_agent(e.host);
      } else {
        cluster.power_off(e.host);
      }
    }
    if (g_stop && !stopping) {
      stopping = true;
      for (pid_t p : agent)
        if (p > 0) kill(p, g_stop);
    }
    bool any = false;
    for (int h = 0; h < n; ++h) {
      if (agent[h] <= 0) continue;
      int status = 0;
      const pid_t got = waitpid(agent[h], &status, WNOHANG);
      if (got == 0) {
        any = true;
        continue;
      }
      agent[h] = -1;
      if (!cluster.powered(h)) continue;  // powered off: its end is the drill, not a failure
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::fprintf(stderr, "ddlrun: elastic: %s's agent exited with status %d\n", cluster.host_name(h).c_str(), code);
      if (result <= 0) result = code;
    }
    // Done when no agent runs and none will start: the job ended, or no power-on is left.
    if (!any && (result >= 0 || (next >= events.size() && control.empty()) || stopping)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (g_stop) return 128 + g_stop;
  return result < 0 ? 1 : result;
}

}  // namespace ddl::launcher::elastic
