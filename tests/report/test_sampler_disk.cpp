// ResourceSampler's disk bytes of the live process after writing and fsyncing 20 MB.
// Where /proc/self/io is unreadable (some containers) this program reports itself skipped.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/common/skip.h"
#include <ddl/report/worker_metrics.h>

using namespace ddl::report;
namespace fs = std::filesystem;

TEST_CASE("ResourceSampler: disk bytes grow after writing and fsyncing 20 MB", "[apps]") {
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  ResourceSampler sampler(opts);
  if (sampler.disk_source() == DiskSource::None) DDL_SKIP("/proc/self/io is unreadable here");
  auto before = sampler.sample();
  auto path = fs::temp_directory_path() / ("ddl_disk_test." + std::to_string(getpid()));
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  REQUIRE(fd >= 0);
  std::vector<char> chunk(1 << 20, 'x');
  for (int i = 0; i < 20; ++i) REQUIRE(::write(fd, chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
  REQUIRE(::fsync(fd) == 0);
  ::close(fd);
  auto after = sampler.sample();
  fs::remove(path);
  INFO("source " << disk_source_name(sampler.disk_source()) << ", written " << before.disk_write_bytes << " -> "
                 << after.disk_write_bytes);
  CHECK(after.disk_write_bytes - before.disk_write_bytes >= 20 * (1 << 20));
}
