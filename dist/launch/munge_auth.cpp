// MUNGE credentials as job tokens (see munge_auth.h): `munge` and `unmunge` run as child
// processes (posix_spawn, safe in a threaded process); no libmunge at build time.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/dist/launch/munge_auth.h>

extern char** environ;

namespace ddl::dist::detail {
namespace {

// Note [MUNGE tokens]
// Under Slurm without DDL_JOB_TOKEN, ranks used to derive one from ~/.ddl/secret, which
// only works where home directories are shared. MUNGE is what Slurm itself authenticates
// with (munge(7)): a credential names the user who made it, is bound to a payload, expires
// (TTL, 300 s by default) and can be decoded once (munged keeps a replay cache), by the
// user it is restricted to. So each connection presents a new credential for "Slurm job J
// step S", restricted to this user; rank 0 admits it only when unmunge succeeds (status 0:
// not replayed, not expired, made with the cluster's key), the UID is its own and the
// payload its own job step. What it does not cover: the store's keys and values still
// cross the network in clear (as with any token), and a process of the same user can make
// credentials too -- as it could read ~/.ddl/secret.

struct Run {
  int status = -1;  // exit status; -1 when it could not run or ran over its time
  std::string out;
};

// Runs argv (found on PATH) with `input` on stdin; stdout captured, stderr into out too.
Run run(const std::vector<std::string>& args, const std::string& input) {
  Run r;
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return r;
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  if (rc == 0) {
    // A credential is a few hundred bytes: it fits the pipe, no deadlock with the reader.
    [[maybe_unused]] ssize_t n = write(in[1], input.data(), input.size());
  }
  close(in[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buf[4096];
  while (rc == 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  if (rc == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.status = WEXITSTATUS(status);
  return r;
}

std::vector<std::string> with_socket(std::vector<std::string> args) {
  if (const char* s = std::getenv("DDL_MUNGE_SOCKET"); s && *s) args.push_back(std::string("--socket=") + s);
  return args;
}

}  // namespace

bool munge_available() {
  static std::once_flag once;
  static bool available = false;
  std::call_once(once, [] { available = run(with_socket({"munge", "--no-input"}), "").status == 0; });
  return available;
}

std::string munge_credential(const std::string& payload) {
  const Run r = run(with_socket({"munge", "--string=" + payload, "--restrict-uid=" + std::to_string(geteuid())}), "");
  std::string cred = r.out;
  while (!cred.empty() && (cred.back() == '\n' || cred.back() == '\r')) cred.pop_back();
  DDL_CHECK(r.status == 0 && !cred.empty(), "store: munge could not make a credential for this rank (", cred,
            "); is munged running? Or set DDL_JOB_TOKEN, the same on every rank");
  return cred;
}

std::string munge_check(const std::string& credential, const std::string& payload) {
  const Run r = run(with_socket({"unmunge", "--numeric", "--keys=STATUS,UID"}), credential + "\n");
  // "STATUS: 0\nUID: 1000\n\n<payload>"
  const size_t blank = r.out.find("\n\n");
  if (r.status < 0) return "unmunge could not run";
  if (blank == std::string::npos) return "unmunge refused the credential: " + r.out.substr(0, r.out.find('\n'));
  std::istringstream meta(r.out.substr(0, blank));
  std::string key, status = "?", uid = "?";
  while (meta >> key) {
    if (key == "STATUS:") meta >> status;
    if (key == "UID:") meta >> uid;
  }
  if (status != "0")
    return "a MUNGE credential unmunge refused (status " + status +
           (status == "17"   ? ": replayed"
            : status == "15" ? ": expired"
                             : "") +
           ")";
  if (uid != std::to_string(geteuid())) return "a MUNGE credential of user " + uid + ", not of this job's user";
  if (r.out.substr(blank + 2) != payload)
    return "a MUNGE credential of another job step ('" + r.out.substr(blank + 2) + "')";
  return "";
}

}  // namespace ddl::dist::detail
