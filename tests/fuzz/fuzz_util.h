// Shared by the fuzz targets: a private temporary folder (on /dev/shm when it exists, so
// writing each input costs no disk I/O) for parsers that take a path, removed at exit. Under
// run.sh it sits inside the run's own folder (DDL_FUZZ_TMPDIR), which run.sh removes even
// when a crashing input ends the target before this destructor runs.
// Not a parser itself; each target says which errors its parser may legitimately throw.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace ddl::fuzz {

class TempDir {
 public:
  TempDir() {
    const char* run_dir = std::getenv("DDL_FUZZ_TMPDIR");
    const char* base = run_dir && *run_dir ? run_dir : std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string tmpl = std::string(base) + "/ddl-fuzz-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Writes data to path()/name (replacing it) and returns the file's path.
  std::string write(const std::string& name, const uint8_t* data, size_t size) const {
    const std::string file = path_ + "/" + name;
    FILE* f = std::fopen(file.c_str(), "wb");
    if (f == nullptr) std::abort();
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return file;
  }

 private:
  std::string path_;
};

}  // namespace ddl::fuzz
