// Holder processes and joining a host (see holder.h). The holder reports to ddlrun through
// a pipe, one line per message ("pid N", "ready", "error TEXT"), each written at once.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <vector>

#include <ddl/cluster/cgroup.h>
#include <ddl/cluster/command.h>
#include <ddl/cluster/holder.h>

namespace ddl::cluster {

namespace {

[[noreturn]] void fail_to(int fd, const char* what) {
  dprintf(fd, "error %s: %s\n", what, std::strerror(errno));
  _exit(1);
}

void on_sigchld(int) {}

// The host's pid 1: mounts its /proc, says it is ready, then reaps orphans until killed.
[[noreturn]] void host_init(int report) {
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    fail_to(report, "mounting the host's /proc");
  dprintf(report, "ready\n");
  close(report);
  struct sigaction sa {};
  sa.sa_handler = on_sigchld;
  sigaction(SIGCHLD, &sa, nullptr);
  sigset_t chld, none;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigemptyset(&none);
  pthread_sigmask(SIG_BLOCK, &chld, nullptr);
  for (;;) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    sigsuspend(&none);
  }
}

// The holder: enters the network namespace, makes the others, starts the host's init.
[[noreturn]] void holder_main(const std::string& netns, const std::string& hostname, int report) {
  const int fd = open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) fail_to(report, "entering the network namespace");
  close(fd);
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID) != 0)
    fail_to(report, "unshare(mount, UTS, IPC, PID namespaces)");
  // Private first, or the /dev/shm mount would propagate back to the machine (mount_namespaces(7)).
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail_to(report, "making / private");
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
    fail_to(report, "mounting a private tmpfs on /dev/shm");
  if (sethostname(hostname.c_str(), hostname.size()) != 0) fail_to(report, "sethostname");
  const pid_t init = fork();
  if (init < 0) fail_to(report, "fork");
  if (init == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    host_init(report);
  }
  dprintf(report, "pid %d\n", int(init));
  close(report);
  int status;
  while (waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  _exit(0);
}

pid_t g_child = -1;
void forward(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

}  // namespace

Holder start_holder(const std::string& netns, const std::string& hostname) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) throw SetupError(std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw SetupError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a SIGKILLed ddlrun takes its hosts along
    if (getppid() != parent) _exit(1);
    close(p[0]);
    holder_main(netns, hostname, p[1]);
  }
  close(p[1]);
  Holder h{pid, -1};
  std::string got, error;
  bool ready = false;
  while (!(ready && h.init_pid > 0) && error.empty()) {
    pollfd pfd{p[0], POLLIN, 0};
    if (poll(&pfd, 1, 10000) == 0) {
      error = "no answer within 10 s";
      break;
    }
    char buf[512];
    const ssize_t n = read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "the holder exited before it was ready";
      break;
    }
    got.append(buf, n);
    for (size_t nl; (nl = got.find('\n')) != std::string::npos; got.erase(0, nl + 1)) {
      const std::string line = got.substr(0, nl);
      if (line == "ready") ready = true;
      if (line.rfind("pid ", 0) == 0) h.init_pid = std::stoi(line.substr(4));
      if (line.rfind("error ", 0) == 0) error = line.substr(6);
    }
  }
  close(p[0]);
  if (!error.empty()) {
    stop_holder(h);
    throw SetupError(hostname + ": starting its namespaces failed: " + error +
                     " (needs CAP_SYS_ADMIN: run ddlrun --hosts as root)");
  }
  return h;
}

void stop_holder(Holder& h) {
  // The holder reaps the host's init and then exits; killing it first would leave init a
  // zombie for the machine's pid 1 to reap.
  if (h.init_pid > 0) kill(h.init_pid, SIGKILL);
  if (h.pid > 0) {
    // Once reaped, the pid may belong to another process: signal it only while it is ours.
    pid_t got = 0;
    for (int i = 0; i < 200 && (got = waitpid(h.pid, nullptr, WNOHANG)) == 0; ++i) usleep(10000);
    if (got == 0 && kill(h.pid, SIGKILL) == 0)
      while (waitpid(h.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
  }
  h = Holder{};
}

void enter_host(const Holder& h, const std::vector<std::string>& cgroup_dirs, const std::string& host_name) {
  const char* host = host_name.c_str();
  for (const std::string& cgroup_dir : cgroup_dirs)
    if (!join_cgroup(cgroup_dir)) {
      dprintf(STDERR_FILENO, "ddlrun: %s: cannot join cgroup %s: %s\n", host, cgroup_dir.c_str(), std::strerror(errno));
      _exit(127);
    }
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
  // Open every namespace first: after joining the mount namespace, /proc is the host's.
  const std::pair<const char*, int> kinds[] = {
      {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS}, {"net", CLONE_NEWNET}, {"pid", CLONE_NEWPID}, {"mnt", CLONE_NEWNS}};
  int fds[5];
  for (int i = 0; i < 5; ++i) {
    char path[64];  // no std::string: this runs between fork and exec (see join_cgroup)
    std::snprintf(path, sizeof path, "/proc/%d/ns/%s", static_cast<int>(h.init_pid), kinds[i].first);
    fds[i] = open(path, O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0) {
      dprintf(STDERR_FILENO, "ddlrun: %s: cannot open %s: %s (did the host's init die?)\n", host, path,
              std::strerror(errno));
      _exit(127);
    }
  }
  for (int i = 0; i < 5; ++i) {
    if (setns(fds[i], kinds[i].second) != 0) {
      dprintf(STDERR_FILENO, "ddlrun: %s: setns(%s) failed: %s\n", host, kinds[i].first, std::strerror(errno));
      _exit(127);
    }
    close(fds[i]);
  }
  if (cwd[0] && chdir(cwd) != 0)
    dprintf(STDERR_FILENO, "ddlrun: %s: cannot enter %s: %s\n", host, cwd, std::strerror(errno));
  const pid_t child = fork();
  if (child < 0) {
    dprintf(STDERR_FILENO, "ddlrun: %s: fork: %s\n", host, std::strerror(errno));
    _exit(127);
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the relay killed: the worker goes too
    if (getppid() != 0) _exit(127);    // the parent is outside this PID namespace: 0 while the relay lives
    return;
  }
  // The relay: the worker's pid for ddlrun. It never execs, so it drops what it inherited
  // (earlier workers' pty masters, the store's sockets) by hand; it keeps stdin, stdout, stderr.
  if (close_range(3, ~0U, 0) != 0)
    for (int fd = 3; fd < 65536; ++fd) close(fd);
  g_child = child;
  struct sigaction sa {};
  sa.sa_handler = forward;
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT}) sigaction(s, &sa, nullptr);
  int status = 0;
  // A stopped worker stops its relay too, so that ddlrun, which waits for the relay, sees
  // the stop; ddlrun's SIGCONT then continues the relay, which forwards it (waitpid(2)).
  while (true) {
    const pid_t got = waitpid(child, &status, WUNTRACED);
    if (got < 0 && errno == EINTR) continue;
    if (got == child && WIFSTOPPED(status)) {
      raise(SIGSTOP);
      continue;
    }
    break;
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    prctl(PR_SET_DUMPABLE, 0);  // no second core file
    kill(getpid(), sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace ddl::cluster
