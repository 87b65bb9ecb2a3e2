// read_file: gzread in 1 MiB steps (it passes plain files through unchanged).
#include "data/file_io.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tensor/error.h"

namespace ddl::data::detail {

bool file_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::vector<uint8_t> read_file(const std::string& path, const char* format) {
  std::error_code ec;
  DDL_CHECK(std::filesystem::is_regular_file(path, ec), format, ": cannot open '", path,
            "': ", std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");
  DDL_CHECK(f != nullptr, format, ": cannot open '", path, "': ", errno ? std::strerror(errno) : "zlib out of memory");
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<uint8_t> bytes;
  for (;;) {
    const size_t old = bytes.size();
    bytes.resize(old + kChunk);
    const int got = gzread(f, bytes.data() + old, static_cast<unsigned>(kChunk));
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
  // A gzip stream cut short reads as a short file; gzerror reports it at close.
  int code = 0;
  const std::string msg = gzerror(f, &code);
  gzclose(f);
  DDL_CHECK(code == Z_OK || code == Z_STREAM_END, format, ": cannot read '", path, "' after ", bytes.size(),
            " bytes: ", msg, " (a corrupt or truncated gzip file?)");
  return bytes;
}

}  // namespace ddl::data::detail
