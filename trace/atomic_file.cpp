// AtomicFile and its siblings (see atomic_file.h): mkstemp in the target's directory, write,
// fsync, rename. The pid in the temporary name lets a later writer remove what a killed one
// left (nn/safetensors.cpp does); the random suffix is what makes the name unguessable.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <streambuf>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/trace/atomic_file.h>

namespace ddl::files {
namespace {

std::string errno_text() { return std::strerror(errno); }

// The process umask, read without changing it (umask(2) would race other threads).
unsigned current_umask() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "Umask:") {
      std::string octal;
      status >> octal;
      return static_cast<unsigned>(std::stoul(octal, nullptr, 8));
    }
    status.ignore(1 << 20, '\n');
  }
  return 022;
}

void write_fd(int fd, const char* p, size_t n, const std::string& op, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    DDL_CHECK(w > 0, op, ": writing '", path, "' failed: ", w < 0 ? errno_text() : "no progress", " (disk full?)");
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

// A std::streambuf over the temporary file's descriptor, buffered in 64 KiB.
class AtomicFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(AtomicFile& file) : file_(file), bytes_(1 << 16) {
    setp(bytes_.data(), bytes_.data() + bytes_.size());
  }
  int sync() override {
    file_.write(pbase(), static_cast<size_t>(pptr() - pbase()));
    setp(bytes_.data(), bytes_.data() + bytes_.size());
    return 0;
  }

 protected:
  int_type overflow(int_type c) override {
    sync();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }

 private:
  AtomicFile& file_;
  std::vector<char> bytes_;
};

std::string temp_prefix(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + name + ".tmp." + std::to_string(::getpid()) + ".";
}

AtomicFile::AtomicFile(std::string path, std::string op, unsigned mode)
    : path_(std::move(path)), op_(std::move(op)), mode_(mode) {
  DDL_CHECK(!path_.empty() && path_.back() != '/', op_, ": '", path_, "' is not a file name");
  std::string name = temp_prefix(path_) + "XXXXXX";
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  DDL_CHECK(fd_ >= 0, op_, ": cannot create a file beside '", path_, "': ", errno_text(),
            " (does its directory exist, and may this user write there?)");
  tmp_ = name;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(tmp_.c_str());
  fd_ = -1;
}

void AtomicFile::write(const void* data, size_t n) {
  DDL_CHECK(fd_ >= 0, op_, ": '", path_, "' was already committed or failed");
  try {
    write_fd(fd_, static_cast<const char*>(data), n, op_, path_);
  } catch (...) {
    discard();
    throw;
  }
}

std::ostream& AtomicFile::stream() {
  if (!stream_) {
    buffer_ = std::make_unique<Buffer>(*this);
    stream_ = std::make_unique<std::ostream>(buffer_.get());
    stream_->exceptions(std::ios::badbit);  // a failed write throws the ddl::Error, not a silent badbit
  }
  return *stream_;
}

void AtomicFile::commit() {
  if (stream_) stream_->flush();
  DDL_CHECK(fd_ >= 0, op_, ": '", path_, "' was already committed or failed");
  const unsigned mode = mode_ & ~current_umask() & 07777;
  std::string failed;
  if (::fchmod(fd_, mode) != 0)
    failed = "setting its mode failed: " + errno_text();
  else if (::fsync(fd_) != 0)
    failed = "fsync failed: " + errno_text() + " (disk full?)";
  else if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    failed = "renaming " + tmp_ + " to it failed: " + errno_text();
  if (!failed.empty()) {
    discard();
    DDL_CHECK(false, op_, ": writing '", path_, "' failed: ", failed);
  }
  ::close(fd_);
  fd_ = -1;
}

void write_atomically(const std::string& path, std::string_view content, const std::string& op, unsigned mode) {
  AtomicFile f(path, op, mode);
  f.write(content);
  f.commit();
}

// Note [Links others could plant]
// A symlink at the path is followed only where nobody else could have put it there or swap
// it: its directory is writable by no one but its owner; or the directory is sticky (as
// /tmp), where others cannot replace an entry, and the link belongs to this user or to the
// directory's owner (the rule of Linux's fs.protected_symlinks). /dev/stdout (root's link
// in root's /dev) passes; any link in a shared 0777 folder does not, this user's own
// included, since others could swap it between the check and the open. A path that is no
// link is opened with O_NOFOLLOW, so a link swapped in after the check is refused too.
bool check_no_planted_link(const std::string& path, const std::string& op) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return false;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat d {};
  const bool found = ::stat(dir.c_str(), &d) == 0;
  const bool private_dir = found && (d.st_mode & 022) == 0;
  const bool sticky_and_trusted =
      found && (d.st_mode & S_ISVTX) != 0 && (link.st_uid == ::geteuid() || link.st_uid == d.st_uid);
  DDL_CHECK(private_dir || sticky_and_trusted, op, ": '", path, "' is a symbolic link (made by user ", link.st_uid,
            ") in ", dir,
            ", a directory other users can write; refusing to follow it (remove it, or name the file "
            "it points to)");
  return true;
}

int open_for_writing(const std::string& path, int flags, const std::string& op, unsigned mode) {
  const bool follow = check_no_planted_link(path, op);
  // O_NONBLOCK so that opening a FIFO with no reader fails (ENXIO) instead of blocking.
  const int fd = ::open(path.c_str(), flags | O_WRONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW), mode);
  DDL_CHECK(fd >= 0 || errno != ELOOP, op, ": '", path, "' became a symbolic link; refusing to write through it");
  DDL_CHECK(fd >= 0 || errno != ENXIO, op, ": '", path, "' is a FIFO that nobody reads; refusing to wait for one");
  DDL_CHECK(fd >= 0, op, ": cannot open '", path, "' for writing: ", errno_text());
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void check_writable(const std::string& path, const std::string& op) { AtomicFile probe(path, op); }

}  // namespace ddl::files
