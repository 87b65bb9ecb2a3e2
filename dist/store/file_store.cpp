// FileStore (see file_store.h). Readers poll for files with a short backoff.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/dist/store/file_store.h>

namespace ddl::dist {
namespace {

std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

// Holds an exclusive lock on dir/lock. Open-file-description locks (F_OFD_SETLKW) exclude
// other threads of this process too, unlike classic fcntl locks, and work over NFS.
class DirLock {
 public:
  explicit DirLock(const std::string& path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);  // never through a planted link
    DDL_CHECK(fd_ >= 0, "FileStore: cannot open lock file ", path, ": ", std::strerror(errno));
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd_, F_OFD_SETLKW, &fl) != 0) {
      DDL_CHECK(errno == EINTR, "FileStore: cannot lock ", path, ": ", std::strerror(errno));
    }
  }
  ~DirLock() { close(fd_); }  // closing releases the lock

 private:
  int fd_;
};

}  // namespace

FileStore::FileStore(std::string dir, Millis timeout) : Store(timeout), dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  DDL_CHECK(std::filesystem::is_directory(dir_), "FileStore: cannot create directory ", dir_, ": ", ec.message());
}

std::string FileStore::path(const std::string& key) const { return dir_ + "/k_" + hex(key); }

void FileStore::write_atomic(const std::string& key, const std::string& value) {
  thread_local std::mt19937_64 rng(std::random_device{}());
  const std::string tmp = dir_ + "/.tmp_" + std::to_string(getpid()) + "_" + std::to_string(rng());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    DDL_CHECK(f.good(), "FileStore: cannot write ", tmp);
    f.write(value.data(), static_cast<std::streamsize>(value.size()));
    DDL_CHECK(f.good(), "FileStore: write to ", tmp, " failed (disk full?)");
  }
  DDL_CHECK(std::rename(tmp.c_str(), path(key).c_str()) == 0, "FileStore: rename to ", path(key),
            " failed: ", std::strerror(errno));
}

void FileStore::set(const std::string& key, const std::string& value) { write_atomic(key, value); }

std::string FileStore::get(const std::string& key, Millis timeout) {
  wait({key}, timeout);
  std::string v;
  DDL_CHECK(read_file(path(key), v), "FileStore: key '", key, "' vanished from ", dir_);
  return v;
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  DirLock lock(dir_ + "/lock");
  std::string v;
  int64_t value = (read_file(path(key), v) ? detail::parse_counter(key, v) : 0) + delta;
  write_atomic(key, std::to_string(value));
  return value;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (access(path(k).c_str(), F_OK) != 0) return false;
  return true;
}

void FileStore::wait(const std::vector<std::string>& keys, Millis timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto backoff = Millis(1);
  while (!check(keys)) {
    DDL_CHECK(std::chrono::steady_clock::now() < deadline, "FileStore: timed out after ", timeout.count(),
              " ms waiting for key(s) ", detail::join_keys(keys), " in ", dir_);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, Millis(50));
  }
}

}  // namespace ddl::dist
