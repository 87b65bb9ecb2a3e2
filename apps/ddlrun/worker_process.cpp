// Starting a worker and reading its output and status (worker_process.h).
#include "apps/ddlrun/worker_process.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <stdexcept>

#include "apps/ddlrun/child_pty.h"
#include "apps/ddlrun/syscalls.h"
#include <ddl/cluster/cluster.h>

namespace ddl::launcher {

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

void pump(Worker& w, int i, StreamKind kind, OutputRelay& relay, bool until_empty) {
  int& fd = w.fds[int(kind)];
  char buf[65536];
  while (fd >= 0) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      relay.data(i, kind, std::string_view(buf, n));
      if (!until_empty) return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else {
      relay.close(i, kind);
      close(fd);
      fd = -1;
    }
  }
}

pid_t spawn(const Config& cfg, Worker& w, const std::vector<std::pair<std::string, std::string>>& env,
            const winsize* size, OutputRelay& relay, int i) {
  std::string why;
  const OutputChannel out = open_output_channel(size, &why);
  OutputChannel err;
  try {
    err = open_pipe_channel();
  } catch (...) {
    close(out.read_fd);
    close(out.write_fd);
    throw;
  }
  if (!why.empty()) relay.message("ddlrun: rank " + std::to_string(w.rank) + ": " + why, i);
  // The worker's argv, made before fork: with --syscalls, strace's options come first.
  std::vector<std::string> command;
  if (!cfg.syscalls_dir.empty())
    command = strace_prefix(cfg.strace, cfg.setpriv, cfg.syscalls_dir + "/rank" + std::to_string(w.rank) + ".strace");
  command.insert(command.end(), cfg.command.begin(), cfg.command.end());
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The environment too: ddlrun may have threads (--link-flap's) while it forks, so the
  // child may call only async-signal-safe functions until it execs (fork(2)); setenv
  // allocates. `env`'s variables replace those of the same name.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    const std::string name(*e, eq ? static_cast<size_t>(eq - *e) : std::strlen(*e));
    bool replaced = false;
    for (const auto& kv : env) replaced = replaced || kv.first == name;
    if (!replaced) env_strings.emplace_back(*e);
  }
  for (size_t i = 0; i < env.size(); ++i) {  // the last of a name wins, as with setenv
    bool later = false;
    for (size_t j = i + 1; j < env.size(); ++j) later = later || env[j].first == env[i].first;
    if (!later) env_strings.push_back(env[i].first + "=" + env[i].second);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_t parent = getpid();
  // Until the child has reset ddlrun's handlers, a signal must wait (blocked) rather than
  // run on_signal in it: stop_all's SIGTERM to a worker not yet scheduled after fork was
  // lost that way, and the worker lived until SIGKILL (posix_spawn(3) blocks them likewise).
  // pthread_sigmask: the mask is per thread; sigprocmask(2) is unspecified with threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = fork();
  if (pid != 0) pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    for (int fd : {out.read_fd, out.write_fd, err.read_fd, err.write_fd}) close(fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // A worker must not outlive ddlrun (killed with SIGKILL, it cannot clean up).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    if (!cfg.syscalls_dir.empty()) setpgid(0, 0);  // See Note [Signals under strace] (launcher.cpp)
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) signal(s, SIG_DFL);
    // Now a pending SIGTERM (or Ctrl-C's SIGINT) ends the worker as it should.
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    dup2(out.write_fd, STDOUT_FILENO);
    dup2(err.write_fd, STDERR_FILENO);
    // On an emulated host the worker runs in its namespaces, one fork further down.
    if (cfg.cluster) cfg.cluster->enter(cfg.host_of(w.rank));
    execvpe(argv[0], argv.data(), envp.data());
    dprintf(STDERR_FILENO, "ddlrun: cannot execute %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  if (!cfg.syscalls_dir.empty()) setpgid(pid, pid);  // either may run first (setpgid(2))
  close(out.write_fd);
  close(err.write_fd);
  w.fds[0] = out.read_fd;
  w.fds[1] = err.read_fd;
  w.pid = pid;
  w.running = true;
  return pid;
}

}  // namespace ddl::launcher
