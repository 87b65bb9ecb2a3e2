// ResumeTempFile and transfer_snapshot (see resume_transfer.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <ddl/base/error.h>
#include <ddl/ft/resume_transfer.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::ft::detail {

namespace {
namespace fs = std::filesystem;
const std::string kPrefix = "ddl-resume-";

// The file to unlink from a signal handler: plain storage, since a handler may call only
// async-signal-safe functions (signal-safety(7)): unlink, sigaction and raise are.
char g_path[4096];
volatile sig_atomic_t g_armed = 0;
constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
struct sigaction g_previous[3];

void on_signal(int sig) {
  const int saved = errno;
  if (g_armed) ::unlink(g_path);
  g_armed = 0;
  for (int i = 0; i < 3; ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  // The signal is blocked while its handler runs: it is delivered again on return, to the
  // previous action (by default the process dies of it, as it would have without us).
  ::raise(sig);
  errno = saved;
}

std::string text_of_errno() { return std::strerror(errno); }

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n, off_t at) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;  // the file shrank since it was measured
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
    at += r;
  }
  return true;
}
}  // namespace

std::function<void(const char*)>& resume_test_hook() {
  static std::function<void(const char*)> hook;
  return hook;
}

int remove_stale_resume_files(const std::string& dir, std::chrono::seconds min_age) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kPrefix, 0) != 0) continue;
    const size_t dash = name.find('-', kPrefix.size());
    if (dash == std::string::npos || dash == kPrefix.size()) continue;
    pid_t pid = 0;
    try {
      pid = static_cast<pid_t>(std::stol(name.substr(kPrefix.size(), dash - kPrefix.size())));
    } catch (const std::exception&) {
      continue;
    }
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code e2;
    const auto written = fs::last_write_time(it->path(), e2);
    if (e2 || fs::file_time_type::clock::now() - written < min_age) continue;
    if (fs::remove(it->path(), e2)) ++removed;
  }
  return removed;
}

ResumeTempFile::ResumeTempFile() {
  const fs::path dir = fs::temp_directory_path();
  remove_stale_resume_files(dir.string(), std::chrono::seconds(60));
  std::string name = (dir / (kPrefix + std::to_string(::getpid()) + "-XXXXXX")).string();
  DDL_CHECK(name.size() < sizeof g_path, "resume: temporary directory path too long: ", dir.string());
  DDL_CHECK(!g_armed, "resume: only one snapshot transfer at a time");
  // mkstemp: a fresh file only this user can read, never one someone placed there first.
  fd_ = ::mkstemp(name.data());
  DDL_CHECK(fd_ >= 0, "resume: cannot create a temporary file for rank 0's snapshot in ", dir.string(), ": ",
            text_of_errno());
  path_ = name;
  std::memcpy(g_path, name.c_str(), name.size() + 1);
  struct sigaction act {};
  act.sa_handler = on_signal;
  sigemptyset(&act.sa_mask);
  act.sa_flags = SA_RESTART;
  // A signal the process ignores (nohup, a wrapper's `trap '' TERM`) stays ignored.
  for (int i = 0; i < 3; ++i) {
    ::sigaction(kSignals[i], nullptr, &g_previous[i]);
    if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kSignals[i], &act, nullptr);
  }
  g_armed = 1;
}

ResumeTempFile::~ResumeTempFile() {
  if (g_armed) {
    g_armed = 0;
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_previous[i], nullptr);
  }
  ::close(fd_);
  ::unlink(path_.c_str());
}

std::string transfer_snapshot(dist::ProcessGroup& group, const std::string& path, ResumeTempFile* into, int64_t piece) {
  const bool root = group.rank() == 0;
  std::string error;
  int fd = -1;
  TransferHeader h{-1, piece};
  if (root) {
    struct stat st {};
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fstat(fd, &st) != 0)
      error = "cannot open " + path + " to send it to the other ranks: " + text_of_errno();
    else
      h.size = st.st_size;
  }
  struct Close {
    int fd;
    ~Close() {
      if (fd >= 0) ::close(fd);
    }
  } close_fd{fd};
  int64_t words[kTransferWords];
  encode_header(h, words);
  const Tensor head = zeros({kTransferWords}, DType::Int64);
  std::memcpy(head.data<int64_t>(), words, sizeof words);
  group.broadcast(head, 0);
  std::memcpy(words, head.data<int64_t>(), sizeof words);
  try {
    h = decode_header(words);  // the same words on every rank: all go on or all stop here
  } catch (const Error& e) {
    return e.what();
  }
  if (h.size < 0) return root ? error : "rank 0 sent no snapshot (it could not read its file)";
  if (into && resume_test_hook()) resume_test_hook()("created");
  Tensor buf = zeros({std::min(h.size, h.piece)}, DType::UInt8);
  for (int64_t i = 0, at = 0; i < h.pieces(); ++i, at += h.piece) {
    const int64_t n = std::min(h.piece, h.size - at);
    if (n != buf.numel()) buf = zeros({n}, DType::UInt8);  // the last, shorter piece
    char* bytes = reinterpret_cast<char*>(buf.data<uint8_t>());
    if (root && error.empty() && !read_all(fd, bytes, static_cast<size_t>(n), static_cast<off_t>(at)))
      error = "cannot read " + path + " to send it to the other ranks: " + text_of_errno();
    group.broadcast(buf, 0);
    if (into && error.empty() && !write_all(into->fd(), bytes, static_cast<size_t>(n)))
      error = "cannot write rank 0's snapshot to " + into->path() + ": " + text_of_errno();
    if (into && resume_test_hook()) resume_test_hook()("piece");
  }
  return error;
}

}  // namespace ddl::ft::detail
