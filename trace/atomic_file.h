// Writing files so that another local user can neither redirect nor tear them. Every file
// ddl writes (snapshots, safetensors, traces, reports, logs) goes through here. In trace/, just
// above base/ (beside the timeline recorder, std and POSIX only), so that every layer can use it.
// It does not lock: two writers of one path end with one whole file, the later rename's.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace ddl::files {

// A file written whole or not at all. The bytes go to a fresh temporary file that mkstemp(3)
// creates in the target's directory (O_EXCL: never a name someone planted there), then
// commit() fsyncs it and renames it over `path`; rename(2) replaces a symlink planted at
// `path` instead of following it. Until commit() any old file at `path` stays whole; a
// writer destroyed uncommitted removes its temporary file. `op` names the caller in errors.
class AtomicFile {
 public:
  AtomicFile(std::string path, std::string op, unsigned mode = 0644);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t n);
  void write(std::string_view text) { write(text.data(), text.size()); }
  std::ostream& stream();  // the same file as a std::ostream (buffered; commit() flushes it)
  // Sets the final mode (`mode` less the umask), fsyncs and renames; throws a ddl::Error
  // naming the path (disk full, directory gone) and then leaves no temporary file behind.
  void commit();
  const std::string& temp_path() const { return tmp_; }

 private:
  class Buffer;
  void discard() noexcept;
  std::string path_, op_, tmp_;
  unsigned mode_;
  int fd_ = -1;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

// `content` as the whole of `path`, through an AtomicFile.
void write_atomically(const std::string& path, std::string_view content, const std::string& op, unsigned mode = 0644);

// Opens `path` to write as it goes (logs, metrics) with open(2)'s `flags` plus O_CLOEXEC.
// A symlink at `path` in a directory other users can write is refused, not followed (see
// Note [Links others could plant]); a FIFO nobody reads is refused instead of blocking.
// Returns the descriptor; throws naming `op` and `path`.
int open_for_writing(const std::string& path, int flags, const std::string& op, unsigned mode = 0644);

// Throws when `path` is a symlink that another user could have planted: one in a directory
// others can write, made by someone else (see Note [Links others could plant]). Readers of
// files a run depends on (snapshots, weights) call it before they open. Returns whether
// `path` is a symlink (one this user may follow).
bool check_no_planted_link(const std::string& path, const std::string& op);

// Throws unless this process may create files in `path`'s directory: an AtomicFile's
// temporary file is made and removed there; `path` itself is not touched.
void check_writable(const std::string& path, const std::string& op);

// The temporary files AtomicFile(path) names: "<dir>/.<name>.tmp.<pid>.XXXXXX".
std::string temp_prefix(const std::string& path);

}  // namespace ddl::files
