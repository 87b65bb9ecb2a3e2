// enter_rootless (see rootless.h): unshare(2), then the uid and gid maps a process may
// write for itself (one line mapping its own id, with setgroups denied first).
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <ddl/cluster/rootless.h>

namespace ddl::cluster {

namespace {
bool write_proc_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}
}  // namespace

std::string enter_rootless() {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0)
    return std::string("unshare(CLONE_NEWUSER) failed: ") + std::strerror(errno);
  if (!write_proc_file("/proc/self/setgroups", "deny") ||
      !write_proc_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
      !write_proc_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
    return std::string("writing the user namespace's uid/gid maps failed: ") + std::strerror(errno);
  // /run/netns (where ip netns keeps its names) and /run/ddlrun, private to this job.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") != 0)
    return std::string("mounting a private /run failed: ") + std::strerror(errno);
  mkdir("/run/netns", 0755);
  return "";
}

}  // namespace ddl::cluster
