// ddlrun's supervisor loop (see launcher.h). One poll() loop watches the workers' output
// pipes and a self-pipe that the SIGCHLD/SIGINT/SIGTERM handlers write to, so signals,
// exits and output are handled in one thread without races.
#include "apps/ddlrun/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "apps/common/shell_quote.h"
#include "apps/ddlrun/hosts/cluster.h"
#include "apps/ddlrun/hosts/network.h"
#include "dist/env.h"
#include "dist/store/socket.h"
#include "dist/store/tcp_store.h"

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

struct Stream {
  int fd = -1;
  FILE* sink = nullptr;
  std::string partial;  // an unfinished line
};

struct Worker {
  int rank = 0, local_rank = 0;
  pid_t pid = -1;
  bool running = false;
  int status = 0;
  Stream out, err;
};

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + signal_name(WTERMSIG(status)) + ")";
  return "stopped with raw status " + std::to_string(status);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Writes every complete line of `s` with the rank prefix; `flush_all` also the remainder.
void emit(Stream& s, const std::string& prefix, bool flush_all) {
  size_t start = 0, nl;
  while ((nl = s.partial.find('\n', start)) != std::string::npos) {
    std::fprintf(s.sink, "%s%.*s\n", prefix.c_str(), int(nl - start), s.partial.data() + start);
    start = nl + 1;
  }
  s.partial.erase(0, start);
  if (flush_all && !s.partial.empty()) {
    std::fprintf(s.sink, "%s%s\n", prefix.c_str(), s.partial.c_str());
    s.partial.clear();
  }
  std::fflush(s.sink);
}

std::string random_token() {
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}

using apps::shell_quote;

// The command line node 1 needs: this one, with its token, --node-rank 1 and node 0's address.
std::string other_node_command(const Config& cfg, const std::string& token) {
  std::vector<std::string> words{"DDL_JOB_TOKEN=" + token};
  const size_t n_opts = cfg.argv.size() - std::min(cfg.argv.size(), cfg.command.size());
  bool has_rank = false, has_addr = false;
  for (size_t i = 0; i < n_opts; ++i) {
    const std::string& a = cfg.argv[i];
    if (a == "--node-rank" && i + 1 < n_opts) {
      words.insert(words.end(), {a, "1"});
      has_rank = true;
      ++i;
      continue;
    }
    if (a.rfind("--node-rank=", 0) == 0) {
      words.push_back("--node-rank=1");
      has_rank = true;
      continue;
    }
    has_addr |= a == "--master-addr" || a.rfind("--master-addr=", 0) == 0;
    words.push_back(a);
  }
  if (words.size() == 1) words.push_back("ddlrun");
  if (!has_rank) words.insert(words.end(), {"--node-rank", "1"});
  if (!has_addr) words.insert(words.end(), {"--master-addr", "ADDRESS_OF_NODE_0"});
  words.insert(words.end(), cfg.command.begin(), cfg.command.end());
  std::string line;
  for (size_t i = 0; i < words.size(); ++i)
    line += (i ? " " : "") + (i == 0 || words[i] == "ADDRESS_OF_NODE_0" ? words[i] : shell_quote(words[i]));
  return line;
}

pid_t spawn(const Config& cfg, Worker& w, const std::vector<std::pair<std::string, std::string>>& env) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // A worker must not outlive ddlrun (killed with SIGKILL, it cannot clean up).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    // On an emulated host the worker runs in its namespaces, one fork further down.
    if (cfg.cluster) cfg.cluster->enter(w.rank / cfg.ranks_per_host);
    std::vector<char*> argv;
    for (const auto& a : cfg.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "ddlrun: cannot execute %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  w.out = {out[0], stdout, ""};
  w.err = {err[0], stderr, ""};
  w.pid = pid;
  w.running = true;
  return pid;
}

struct Outcome {
  enum Kind { Ok, Failed, Interrupted } kind = Ok;
  int exit_code = 0;
};

// One attempt: start every worker, supervise, return when all have exited.
Outcome run_attempt(const Config& cfg, int attempt, const std::string& port, const std::string& token) {
  const int world = cfg.nproc * cfg.nnodes;
  std::vector<Worker> workers(cfg.nproc);
  for (int i = 0; i < cfg.nproc; ++i) {
    Worker& w = workers[i];
    w.rank = cfg.node_rank * cfg.nproc + i;
    w.local_rank = cfg.cluster ? i % cfg.ranks_per_host : i;
    const int local_world = cfg.cluster ? cfg.ranks_per_host : cfg.nproc;
    std::vector<std::pair<std::string, std::string>> env = {{"RANK", std::to_string(w.rank)},
                                                            {"LOCAL_RANK", std::to_string(w.local_rank)},
                                                            {"WORLD_SIZE", std::to_string(world)},
                                                            {"LOCAL_WORLD_SIZE", std::to_string(local_world)},
                                                            {"MASTER_ADDR", cfg.master_addr},
                                                            {"MASTER_PORT", port},
                                                            {"DDL_RESTART_COUNT", std::to_string(attempt)},
                                                            {"DDL_JOB_TOKEN", token},
                                                            {"DDL_STORE_SERVED", cfg.launcher_store ? "1" : "0"}};
    if (cfg.timeout_seconds > 0) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", cfg.timeout_seconds);
      env.emplace_back("DDL_TIMEOUT", seconds);
    }
    if (cfg.cluster) {
      const int host = w.rank / cfg.ranks_per_host;
      env.insert(env.end(), {{"DDL_GLOO_IFACE", hosts::kHostIface},
                             {"DDL_HOST", cfg.cluster->host_name(host)},
                             {"DDL_HOST_LINK", cfg.cluster->link_description(host)}});
    }
    spawn(cfg, w, env);
  }
  int failed = -1;
  bool stopping = false;
  Clock::time_point drain_until = Clock::now() + std::chrono::seconds(1);
  int interrupted_by = 0;
  Clock::time_point kill_at{};
  auto stop_all = [&](int sig) {
    for (auto& w : workers)
      if (w.running) kill(w.pid, sig);
    if (!stopping) kill_at = Clock::now() + std::chrono::milliseconds(int(cfg.grace_seconds * 1000));
    stopping = true;
  };
  auto prefix = [&](const Worker& w) { return "[rank " + std::to_string(w.rank) + "/" + std::to_string(world) + "] "; };
  while (true) {
    bool any_running = false, any_open = false;
    for (auto& w : workers) {
      any_running |= w.running;
      any_open |= w.out.fd >= 0 || w.err.fd >= 0;
    }
    if (!any_running && !any_open) break;
    std::vector<pollfd> fds{{g_signal_pipe[0], POLLIN, 0}};
    std::vector<Stream*> streams{nullptr};
    for (auto& w : workers)
      for (Stream* s : {&w.out, &w.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    poll(fds.data(), fds.size(), 100);
    if (fds[0].revents & POLLIN) {
      char buf[64];
      [[maybe_unused]] ssize_t n = read(g_signal_pipe[0], buf, sizeof buf);
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Stream& s = *streams[i];
      const Worker* owner = nullptr;
      for (auto& w : workers)
        if (&w.out == &s || &w.err == &s) owner = &w;
      char buf[65536];
      ssize_t n = read(s.fd, buf, sizeof buf);
      if (n > 0) {
        s.partial.append(buf, n);
        emit(s, prefix(*owner), false);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        emit(s, prefix(*owner), true);
        close(s.fd);
        s.fd = -1;
      }
    }
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (int i = 0; i < cfg.nproc; ++i) {
        Worker& w = workers[i];
        if (w.pid != pid) continue;
        w.running = false;
        w.status = status;
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && failed < 0 && !stopping) {
          failed = i;
          const std::string host = cfg.cluster ? cfg.cluster->host_name(w.rank / cfg.ranks_per_host) + ", " : "";
          std::fprintf(stderr, "ddlrun: rank %d (%slocal rank %d, pid %d) %s; stopping the other workers\n", w.rank,
                       host.c_str(), w.local_rank, int(pid), describe_status(status).c_str());
          stop_all(SIGTERM);
        }
      }
    }
    if (g_forward_signal) {
      int sig = g_forward_signal;
      g_forward_signal = 0;
      std::fprintf(stderr, "ddlrun: got %s, forwarding it to the workers\n", signal_name(sig).c_str());
      stop_all(sig);
      interrupted_by = sig;  // no restart after an interrupt
    }
    if (stopping && Clock::now() > kill_at) {
      for (auto& w : workers)
        if (w.running) {
          std::fprintf(stderr, "ddlrun: rank %d did not exit within %.1f s; sending SIGKILL\n", w.rank,
                       cfg.grace_seconds);
          kill(w.pid, SIGKILL);
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
  for (auto& w : workers)
    for (Stream* s : {&w.out, &w.err})
      if (s->fd >= 0) {
        emit(*s, prefix(w), true);
        close(s->fd);
      }
  if (interrupted_by) return {Outcome::Interrupted, 128 + interrupted_by};
  if (failed >= 0) return {Outcome::Failed, exit_code(workers[failed].status)};
  return {};
}

}  // namespace

sigset_t stop_signals() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&s, sig);
  return s;
}

int run(const Config& cfg) {
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
  sigprocmask(SIG_UNBLOCK, &stops, nullptr);

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
      hosts::run_in_netns(cfg.cluster->netns_path(0), serve);
    else
      serve();
    port = server->port();
  } else if (cfg.cluster && port == 0) {
    hosts::run_in_netns(cfg.cluster->netns_path(0), [&] { port = dist::detail::find_free_port(cfg.master_addr); });
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
  for (int attempt = 0;; ++attempt) {
    Outcome r = run_attempt(cfg, attempt, std::to_string(port), token);
    if (r.kind != Outcome::Failed) return r.exit_code;
    if (attempt >= cfg.max_restarts) {
      if (cfg.max_restarts > 0) std::fprintf(stderr, "ddlrun: giving up after %d attempts\n", attempt + 1);
      // A rank could not start, and ranks of other nodes may still be joining: keep the store
      // up (bounded) so they read why from it and stop now, instead of finding it gone. Not
      // after other failures: a rank behind a cut link would hold the launcher the whole time.
      if (server && cfg.nnodes > 1 && server->has_startup_failure()) {
        std::fprintf(stderr, "ddlrun: keeping the store up until the other nodes' ranks have left (3 to 30 s)\n");
        server->linger(std::chrono::seconds(30), std::chrono::seconds(3));
      }
      return r.exit_code;
    }
    std::fprintf(stderr, "ddlrun: restarting the group (restart %d of %d)\n", attempt + 1, cfg.max_restarts);
  }
}

}  // namespace ddl::launcher
