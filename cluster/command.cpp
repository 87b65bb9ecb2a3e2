// run_command: fork, exec, collect the output through one pipe (see command.h).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <ddl/cluster/command.h>

namespace ddl::cluster {

CommandResult run_command(const std::vector<std::string>& argv) {
  CommandResult r;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {-1, std::string("pipe: ") + std::strerror(errno)};
  const pid_t pid = fork();
  if (pid < 0) {
    const std::string why = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return {-1, why};
  }
  if (pid == 0) {
    // A process group of its own: a Ctrl-C at the terminal is ddlrun's to handle (it then
    // tears the hosts down with more of these commands), not a way to kill one halfway.
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    dprintf(STDERR_FILENO, "cannot execute %s: %s (is iproute2 installed?)", args[0], std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n > 0)
      r.output.append(buf, n);
    else if (errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  while (!r.output.empty() && (r.output.back() == '\n' || r.output.back() == ' ')) r.output.pop_back();
  return r;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

void run_checked(const std::string& what, const std::vector<std::string>& argv) {
  CommandResult r = run_command(argv);
  if (r.status != 0)
    throw SetupError(what + ": `" + command_line(argv) + "` failed" + (r.output.empty() ? "" : ": " + r.output));
}

}  // namespace ddl::cluster
