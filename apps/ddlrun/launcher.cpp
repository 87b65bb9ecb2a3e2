// ddlrun's supervisor loop (see launcher.h). One poll() loop watches the workers' output
// (a pty and a pipe each) and a self-pipe that the SIGCHLD/SIGINT/SIGTERM handlers write
// to, so signals, exits and output are handled in one thread without races. What is shown
// of the output, and where it is logged, is output_relay.h's business.
#include "apps/ddlrun/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "apps/common/shell_quote.h"
#include "apps/ddlrun/child_pty.h"
#include "apps/ddlrun/flight_watch.h"
#include "apps/ddlrun/node_agreement.h"
#include "apps/ddlrun/node_command.h"
#include "apps/ddlrun/output_relay.h"
#include "apps/ddlrun/syscalls.h"
#include "apps/ddlrun/worker_process.h"
#include <ddl/cluster/cluster.h>
#include <ddl/cluster/network.h>
#include <ddl/dist/env.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/tcp_store.h>
#include <ddl/dist/transport/shm_segment.h>

namespace ddl::launcher {
namespace {

using Clock = std::chrono::steady_clock;

int g_signal_pipe[2] = {-1, -1};
volatile sig_atomic_t g_forward_signal = 0;

void on_signal(int sig) {
  if (sig != SIGCHLD) g_forward_signal = sig;
  char c = static_cast<char>(sig);
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &c, 1);
}

// Worker i's host as the relay names it: the emulated host, else this machine's name.
std::string relay_host(const Config& cfg, int i) {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return cfg.cluster ? cfg.cluster->host_name(cfg.host_of(i)) : name;
}

}  // namespace

RelayOptions relay_options(const Config& cfg) {
  RelayOptions o;
  o.all_ranks = cfg.all_ranks;
  o.console_tty = isatty(STDOUT_FILENO);
  o.world = cfg.world();
  o.log_dir = cfg.log_dir;
  o.logs = cfg.logs;
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  for (int i = 0; i < cfg.nproc; ++i) {
    o.ranks.push_back(cfg.first_rank() + i);
    o.hosts.push_back(cfg.cluster ? cfg.cluster->host_name(cfg.host_of(i)) : name);
  }
  for (size_t i = 0; i < cfg.command.size(); ++i) o.command += (i ? " " : "") + apps::shell_quote(cfg.command[i]);
  // The command goes on one line of its own in each log: a newline in it is written as \n.
  for (size_t at; (at = o.command.find('\n')) != std::string::npos;) o.command.replace(at, 1, "\\n");
  return o;
}

// One attempt: start every worker, supervise, return when all have exited.
Outcome run_attempt(const Config& cfg, int attempt, const std::string& port, const std::string& token,
                    const std::string& run_id, OutputRelay& relay) {
  const int world = cfg.world();
  relay.begin_attempt(attempt);
  // Workers' ptys get the console's size, so what they lay out fits it.
  winsize console_size{};
  const bool sized = isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &console_size) == 0;
  // DDL_PROGRESS=0 given to ddlrun turns rank 0's bar off too.
  const char* user_progress = std::getenv("DDL_PROGRESS");
  const bool bar_off = user_progress && std::string(user_progress) == "0";
  std::vector<Worker> workers(cfg.nproc);
  FlightWatch flight(cfg.flight_dir, attempt, cfg.nproc);
  for (int i = 0; i < cfg.nproc; ++i) {
    Worker& w = workers[i];
    w.rank = cfg.first_rank() + i;
    w.local_rank = cfg.cluster ? i - cfg.first_rank_on_host(cfg.host_of(i)) : i;
    const int local_world = cfg.cluster ? cfg.ranks_on_host(cfg.host_of(i)) : cfg.nproc;
    std::vector<std::pair<std::string, std::string>> env = {{"RANK", std::to_string(w.rank)},
                                                            {"LOCAL_RANK", std::to_string(w.local_rank)},
                                                            {"WORLD_SIZE", std::to_string(world)},
                                                            {"LOCAL_WORLD_SIZE", std::to_string(local_world)},
                                                            {"MASTER_ADDR", cfg.master_addr},
                                                            {"MASTER_PORT", port},
                                                            {"DDL_RESTART_COUNT", std::to_string(attempt)},
                                                            {"DDL_JOB_TOKEN", token},
                                                            {"DDL_RUN_ID", run_id},
                                                            {"DDL_STORE_SERVED", cfg.launcher_store ? "1" : "0"},
                                                            {"DDL_PROGRESS", bar_off ? "0" : relay.progress_env(i)}};
    if (flight.on()) env.emplace_back("DDL_FLIGHT_DIR", flight.dir());
    if (cfg.timeout_seconds > 0) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", cfg.timeout_seconds);
      env.emplace_back("DDL_TIMEOUT", seconds);
    }
    env.insert(env.end(), cfg.extra_env.begin(), cfg.extra_env.end());
    if (cfg.cluster) {
      const int host = cfg.host_of(w.rank);
      env.insert(env.end(), {{"DDL_GLOO_IFACE", ddl::cluster::kHostIface},
                             {"DDL_HOST", cfg.cluster->host_name(host)},
                             {"DDL_HOST_LINK", cfg.cluster->link_description(host)}});
    }
    spawn(cfg, w, env, sized ? &console_size : nullptr, relay, i);
  }
  int failed = -1;
  bool stopping = false, stopped_by_check = false;
  Clock::time_point drain_until = Clock::now() + std::chrono::seconds(1);
  int interrupted_by = 0;
  Clock::time_point kill_at{};
  // Note [Signals under strace]: strace -o FILE PROG blocks fatal signals (strace(1), -I 3)
  // and, killed, detaches its tracees, which would outlive the job. So with --syscalls each
  // worker leads a process group of its own (strace, the program, its children) and ddlrun
  // signals the group: the program gets the signal itself, strace writes its summary when
  // the program has ended and exits with its status, and a SIGKILL takes both.
  auto signal_worker = [&](const Worker& w, int sig) { kill(cfg.syscalls_dir.empty() ? w.pid : -w.pid, sig); };
  auto stop_all = [&](int sig) {
    for (auto& w : workers)
      if (w.running) {
        signal_worker(w, sig);
        if (w.stopped) signal_worker(w, SIGCONT);  // else SIGTERM waits until it continues, as kill(1) notes
        w.signalled = true;
        w.sent = sig;
      }
    if (!stopping) kill_at = Clock::now() + std::chrono::milliseconds(int(cfg.grace_seconds * 1000));
    stopping = true;
  };
  // "host1, " naming a rank's host in messages, or "".
  auto host_label_of = [&](const Worker& w) -> std::string {
    if (cfg.cluster) return cfg.cluster->host_name(cfg.host_of(w.rank)) + ", ";
    return cfg.host_label.empty() ? "" : cfg.host_label + ", ";
  };
  // A Ctrl-C reaches the workers (the terminal's process group) as it reaches ddlrun: it is
  // handled before any worker it killed is reaped, so that worker is not blamed for it.
  auto handle_forward_signal = [&] {
    if (!g_forward_signal) return;
    const int sig = g_forward_signal;
    g_forward_signal = 0;
    relay.message("ddlrun: got " + signal_name(sig) + ", forwarding it to the workers");
    stop_all(sig);
    interrupted_by = sig;  // no restart after an interrupt
  };
  while (true) {
    bool any_running = false, any_open = false;
    for (auto& w : workers) {
      any_running |= w.running;
      any_open |= w.fds[0] >= 0 || w.fds[1] >= 0;
    }
    if (!any_running && !any_open) break;
    std::vector<pollfd> fds{{g_signal_pipe[0], POLLIN, 0}};
    std::vector<std::pair<int, StreamKind>> streams{{-1, StreamKind::Out}};
    for (int i = 0; i < cfg.nproc; ++i)
      for (StreamKind kind : {StreamKind::Out, StreamKind::Err})
        if (workers[i].fds[int(kind)] >= 0) {
          fds.push_back({workers[i].fds[int(kind)], POLLIN, 0});
          streams.emplace_back(i, kind);
        }
    poll(fds.data(), fds.size(), 100);
    if (fds[0].revents & POLLIN) {
      char buf[64];
      [[maybe_unused]] ssize_t n = read(g_signal_pipe[0], buf, sizeof buf);
    }
    for (size_t k = 1; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto [i, kind] = streams[k];
      pump(workers[i], i, kind, relay, false);
    }
    handle_forward_signal();
    if (cfg.stop_check && !stopping && any_running && cfg.stop_check()) {
      stopped_by_check = true;
      stop_all(SIGTERM);
    }
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
      handle_forward_signal();  // one that arrived while waitpid ran
      for (int i = 0; i < cfg.nproc; ++i) {
        Worker& w = workers[i];
        if (w.pid != pid) continue;
        if (WIFSTOPPED(status)) {  // still running: named, so a hang at the peers' timeout has a culprit
          const std::string host = host_label_of(w);
          if (!w.stopped)
            relay.message("ddlrun: rank " + std::to_string(w.rank) + " (" + host + "local rank " +
                              std::to_string(w.local_rank) + ", pid " + std::to_string(pid) + ") was stopped by " +
                              signal_name(WSTOPSIG(status)) +
                              ": it answers no peer until it gets SIGCONT, so they fail at their timeout",
                          i);
          w.stopped = true;
          if (stopping) signal_worker(w, SIGCONT);
          continue;
        }
        w.running = false;
        w.status = status;
        // What it wrote before it exited is all in its pty or pipe now.
        for (StreamKind kind : {StreamKind::Out, StreamKind::Err}) pump(w, i, kind, relay, true);
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && failed < 0 && !stopping) {
          failed = i;
          const std::string host = host_label_of(w);
          const std::string note = cfg.cluster ? cfg.cluster->failure_note(cfg.host_of(w.rank)) : "";
          relay.message("ddlrun: rank " + std::to_string(w.rank) + " (" + host + "local rank " +
                            std::to_string(w.local_rank) + ", pid " + std::to_string(pid) + ") " +
                            describe_status(status) + note + "; stopping the other workers",
                        i);
        }
        if (!ok && !w.signalled) relay.show_hidden_tail(i);
        relay.note(i, "ddlrun: rank " + std::to_string(w.rank) + " " + describe_status(status) +
                          (w.signalled ? " (ddlrun had sent it " + signal_name(w.sent) + ")" : ""));
        if (failed == i && !stopping && !flight.asking()) {
          // First every rank still running dumps its flight recorder (SIGUSR2), then stops.
          std::vector<pid_t> pids;
          std::vector<int> ranks;
          for (const auto& x : workers) pids.push_back(x.running ? x.pid : 0), ranks.push_back(x.rank);
          if (!flight.ask(
                  pids, ranks, [](pid_t p) { kill(p, SIGUSR2); }, std::chrono::milliseconds(1500)))
            stop_all(SIGTERM);
        }
      }
    }
    if (flight.asking()) {
      std::vector<int> ranks;
      std::vector<bool> running;
      for (const auto& w : workers) ranks.push_back(w.rank), running.push_back(w.running);
      if (flight.window_over(ranks, running) && !stopping) stop_all(SIGTERM);
    }
    if (stopping && Clock::now() > kill_at) {
      for (auto& w : workers)
        if (w.running) {
          char grace[32];
          std::snprintf(grace, sizeof grace, "%.1f", cfg.grace_seconds);
          relay.message(
              "ddlrun: rank " + std::to_string(w.rank) + " did not exit within " + grace + " s; sending SIGKILL",
              int(&w - workers.data()));
          signal_worker(w, SIGKILL);
          w.sent = SIGKILL;
        }
      kill_at = Clock::now() + std::chrono::hours(1);
    }
    // Grandchildren may keep a pipe open after every worker exited: read on for a second.
    if (any_running) {
      drain_until = Clock::now() + std::chrono::seconds(1);
    } else if (Clock::now() > drain_until) {
      break;
    }
  }
  for (int i = 0; i < cfg.nproc; ++i)
    for (StreamKind kind : {StreamKind::Out, StreamKind::Err})
      if (int& fd = workers[i].fds[int(kind)]; fd >= 0) {
        relay.close(i, kind);
        close(fd);
        fd = -1;
      }
  if (interrupted_by) return {Outcome::Interrupted, 128 + interrupted_by};
  if (failed >= 0 && flight.on()) {
    std::vector<RankFacts> facts;
    for (const Worker& w : workers) {
      const int host = cfg.cluster ? cfg.host_of(w.rank) : 0;
      const std::string note =
          cfg.cluster ? host_note(cfg.cluster->failure_note(host), cfg.cluster->host_name(host)) : "";
      facts.push_back({w.rank, relay_host(cfg, int(&w - workers.data())), std::nullopt, w.stopped, false, false,
                       describe_status(w.status), w.signalled, note});
    }
    std::string text = flight.verdict(
        std::move(facts), cfg.log_dir.empty() ? ""
                                              : cfg.log_dir + "/verdict" +
                                                    (attempt > 0 ? std::to_string(attempt) : std::string()) + ".txt");
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty()) relay.message(text);
  }
  if (failed >= 0) return {Outcome::Failed, exit_code(workers[failed].status)};
  if (stopped_by_check) return {Outcome::Stopped, 0};
  return {};
}

sigset_t stop_signals() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&s, sig);
  return s;
}

void install_signal_handlers() {
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe failed");
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  // A hang-up (a closed ssh session) stops the job like SIGTERM; a closed output pipe
  // (`ddlrun ... | head`) must not kill ddlrun before it has cleaned up.
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaction(s, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // main() blocks SIGINT and SIGTERM while it builds emulated hosts; from here they are handled.
  const sigset_t stops = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
}

int run(const Config& cfg) {
  install_signal_handlers();
  // The job token keeps other processes out of the store (Note [Job tokens] in dist/env.cpp):
  // given by the user, else made here; across nodes, node 0 makes it and shows it once.
  std::string token = dist::read_job_token().value;
  if (token.empty() && cfg.nnodes > 1 && cfg.node_rank > 0) {
    std::fprintf(stderr,
                 "ddlrun: node %d of %d needs the job token that node 0's ddlrun printed: set DDL_JOB_TOKEN to it "
                 "(or DDL_JOB_TOKEN_FILE to a chmod 600 file holding it)\n",
                 cfg.node_rank, cfg.nnodes);
    return 2;
  }
  const bool made_token = token.empty();
  if (made_token) token = random_token();
  // Node 0 serves the store for the job's whole life, across restarts (keys are per attempt).
  std::unique_ptr<dist::TCPStoreServer> server;
  int port = cfg.master_port;
  if (cfg.node_rank == 0 && cfg.launcher_store) {
    auto serve = [&] {
      server = std::make_unique<dist::TCPStoreServer>(cfg.store_bind.empty() ? cfg.master_addr : cfg.store_bind, port,
                                                      token);
    };
    // Emulated hosts: the store's socket belongs to host 0's network namespace.
    if (cfg.cluster)
      ddl::cluster::run_in_netns(cfg.cluster->netns_path(0), serve);
    else
      serve();
    port = server->port();
  } else if (cfg.cluster && port == 0) {
    ddl::cluster::run_in_netns(cfg.cluster->netns_path(0),
                               [&] { port = dist::detail::find_free_port(cfg.master_addr); });
  } else if (port == 0) {
    port = dist::detail::find_free_port(cfg.master_addr);
  }
  if (made_token && cfg.nnodes > 1) {
    std::fprintf(stderr,
                 "ddlrun: made this job's token; the store (port %d) accepts only ranks that present it. Start the "
                 "other nodes with it in DDL_JOB_TOKEN, node 1 with:\n  %s\n",
                 port, other_node_command(cfg, token).c_str());
    if (cfg.nnodes > 2) std::fprintf(stderr, "ddlrun: and --node-rank 2 to %d on the others\n", cfg.nnodes - 1);
  }
  // Nodes meet before any worker starts: ranks from every node's count, and agreement.
  Config met = cfg;
  if (int rc = join_nodes(met, port, token, server.get()); rc != 0) return rc;
  OutputRelay relay(relay_options(met));
  // Names this launcher's shared-memory segments (Note [Segment names] in
  // dist/transport/shm_segment.cpp): those its ranks could not unlink, all of them killed
  // while setting one up, are removed once every rank of the attempt has exited.
  const std::string run_id = "ddlrun" + std::to_string(getpid()) + "_" + random_token().substr(0, 8);
  const auto remove_segments = [&] {
    const std::vector<std::string> left = dist::detail::remove_shm_segments(run_id);
    std::string names;
    for (const std::string& n : left) names += " /dev/shm/" + n;
    if (!left.empty()) relay.message("ddlrun: removed what the ranks left in /dev/shm:" + names);
  };
  for (int attempt = 0;; ++attempt) {
    Outcome r = run_attempt(met, attempt, std::to_string(port), token, run_id, relay);
    remove_segments();
    if (r.kind != Outcome::Failed) return r.exit_code;
    if (attempt >= met.max_restarts) {
      if (met.max_restarts > 0) relay.message("ddlrun: giving up after " + std::to_string(attempt + 1) + " attempts");
      // A rank could not start, and ranks of other nodes may still be joining: keep the store
      // up (bounded) so they read why from it and stop now, instead of finding it gone. Not
      // after other failures: a rank behind a cut link would hold the launcher the whole time.
      if (server && met.nnodes > 1 && server->has_startup_failure()) {
        relay.message("ddlrun: keeping the store up until the other nodes' ranks have left (3 to 30 s)");
        server->linger(std::chrono::seconds(30), std::chrono::seconds(3));
      }
      return r.exit_code;
    }
    relay.message("ddlrun: restarting the group (restart " + std::to_string(attempt + 1) + " of " +
                  std::to_string(met.max_restarts) + ")");
  }
}

}  // namespace ddl::launcher
