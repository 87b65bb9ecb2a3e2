// read_file: gzread in 1 MiB steps (it passes plain files through unchanged), never
// past a cap, so a small gzip bomb cannot take gigabytes before it is refused.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <ddl/base/error.h>
#include <ddl/data/file_io.h>

namespace ddl::data::detail {

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

uint64_t max_file_bytes() {
  const char* env = std::getenv("DDL_DATA_MAX_BYTES");
  if (env == nullptr || *env == '\0') return uint64_t{4} << 30;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(env, &end, 10);
  DDL_CHECK(errno == 0 && *end == '\0' && v > 0 && env[0] != '-', "DDL_DATA_MAX_BYTES='", env,
            "' is not a positive number of bytes");
  return v;
}

namespace {

gzFile open_checked(const std::string& path, const char* format) {
  std::error_code ec;
  // Regular files only: a FIFO or device would block or never end.
  DDL_CHECK(std::filesystem::is_regular_file(path, ec), format, ": cannot open '", path,
            "': ", std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  DDL_CHECK(f != nullptr, format, ": cannot open '", path, "': ", errno ? std::strerror(errno) : "zlib out of memory");
  return f;
}

// Reads up to `limit` bytes; `exceeded` says whether more were there.
std::vector<uint8_t> read_up_to(gzFile f, const std::string& path, const char* format, uint64_t limit, bool& exceeded) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<uint8_t> bytes;
  exceeded = false;
  for (;;) {
    const size_t old = bytes.size();
    // One byte past the limit tells "exactly limit" from "more".
    const uint64_t room = limit + 1 - old;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, room));
    if (want == 0) break;
    bytes.resize(old + want);
    const int got = gzread(f, bytes.data() + old, static_cast<unsigned>(want));
    if (got < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      DDL_CHECK(false, format, ": cannot read '", path, "' after ", old, " bytes: ", msg,
                " (a corrupt or truncated gzip file?)");
    }
    bytes.resize(old + static_cast<size_t>(got));
    if (got == 0) break;
  }
  if (bytes.size() > limit) {
    exceeded = true;
    bytes.resize(static_cast<size_t>(limit));
  }
  return bytes;
}

}  // namespace

std::vector<uint8_t> read_file(const std::string& path, const char* format, uint64_t max_bytes) {
  max_bytes = std::min<uint64_t>(max_bytes, uint64_t{1} << 62);
  gzFile f = open_checked(path, format);
  bool exceeded = false;
  std::vector<uint8_t> bytes = read_up_to(f, path, format, max_bytes, exceeded);
  if (exceeded) {
    gzclose(f);
    DDL_CHECK(false, format, ": '", path, "' holds more than ", max_bytes,
              " bytes (inflated), the most this reader accepts for it (at most DDL_DATA_MAX_BYTES, default 4 GiB): "
              "a corrupt header or a gzip bomb?");
  }
  // A gzip stream cut short reads as a short file; gzerror reports it at close.
  int code = 0;
  const std::string msg = gzerror(f, &code);
  gzclose(f);
  DDL_CHECK(code == Z_OK || code == Z_STREAM_END, format, ": cannot read '", path, "' after ", bytes.size(),
            " bytes: ", msg, " (a corrupt or truncated gzip file?)");
  return bytes;
}

std::vector<uint8_t> read_file(const std::string& path, const char* format) {
  return read_file(path, format, max_file_bytes());
}

std::vector<uint8_t> read_head(const std::string& path, const char* format, size_t n) {
  gzFile f = open_checked(path, format);
  bool exceeded = false;
  std::vector<uint8_t> bytes = n > 0 ? read_up_to(f, path, format, n, exceeded) : std::vector<uint8_t>{};
  gzclose(f);
  return bytes;
}

}  // namespace ddl::data::detail
