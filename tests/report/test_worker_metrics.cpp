// ResourceSampler and its /proc parsers: synthetic /proc text with known numbers, a
// fake /proc tree (deltas, missing files → n/a), and the live process: CPU % of a busy
// loop and of a sleep, RSS after touching 200 MB, disk bytes after writing 20 MB.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "report/worker_metrics.h"

using namespace ddl::report;
namespace fs = std::filesystem;

namespace {

const char* kStat =
    "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 4 0 100 "
    "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
const char* kStatus =
    "Name:\tprog\nVmPeak:\t  900000 kB\nVmSize:\t  800000 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n"
    "Threads:\t4\n";
const char* kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "
    "carrier compressed\n"
    "    lo: 5000     10    0    0    0     0          0         0     5000     10    0    0    0     0       0 0\n"
    "  eth0: 1000      2    0    0    0     0          0         0      300      3    0    0    0     0       0 0\n"
    "  eth1:   20      1    0    0    0     0          0         0        4      1    0    0    0     0       0 0\n";
const char* kIo =
    "rchar: 7000\nwchar: 8000\nsyscr: 10\nsyscw: 11\nread_bytes: 4096\nwrite_bytes: 12288\n"
    "cancelled_write_bytes: 0\n";

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

fs::path fresh_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / (name + "." + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Spins one thread per core (at most 4): on a loaded machine the scheduler shares CPU
// per thread, so this keeps the process busy enough for the > 50 % check.
void busy_for(double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  auto spin = [end] {
    volatile double x = 0;
    while (std::chrono::steady_clock::now() < end)
      for (int i = 0; i < 1000; ++i) x = x + std::sqrt(static_cast<double>(i));
  };
  unsigned n = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < n; ++i) threads.emplace_back(spin);
  spin();
  for (auto& t : threads) t.join();
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

TEST_CASE("proc parsers: synthetic text with known numbers", "[apps]") {
  REQUIRE(parse_stat_cpu_ticks(kStat) == 300);
  REQUIRE_FALSE(parse_stat_cpu_ticks("4242 (prog) S 1 2"));
  REQUIRE_FALSE(parse_stat_cpu_ticks(""));

  auto mem = parse_status_memory(kStatus);
  REQUIRE(mem);
  CHECK(mem->rss_bytes == 1024 * 1024);
  CHECK(mem->peak_rss_bytes == 2048 * 1024);
  REQUIRE_FALSE(parse_status_memory("Name:\tprog\n"));

  auto net = parse_net_dev(kNetDev);
  REQUIRE(net);
  CHECK(net->rx_bytes == 1020);
  CHECK(net->tx_bytes == 304);
  CHECK(net->lo_rx_bytes == 5000);
  CHECK(net->lo_tx_bytes == 5000);
  REQUIRE_FALSE(parse_net_dev("Inter-| Receive\n face |bytes\n"));

  auto io = parse_proc_io(kIo);
  REQUIRE(io);
  CHECK(io->storage);
  CHECK(io->read_bytes == 4096);
  CHECK(io->write_bytes == 12288);
  auto chars = parse_proc_io("rchar: 7000\nwchar: 8000\n");  // no storage accounting
  REQUIRE(chars);
  CHECK_FALSE(chars->storage);
  CHECK(chars->read_bytes == 7000);
  CHECK(chars->write_bytes == 8000);
  REQUIRE_FALSE(parse_proc_io("garbage"));
}

TEST_CASE("ResourceSampler: deltas from a fake /proc tree", "[apps]") {
  auto root = fresh_dir("ddl_fake_proc");
  write_file(root / "self/stat", kStat);
  write_file(root / "self/status", kStatus);
  write_file(root / "net/dev", kNetDev);
  write_file(root / "self/io", kIo);
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  opts.proc_root = root.string();
  ResourceSampler sampler(opts);
  CHECK(sampler.disk_source() == DiskSource::Storage);

  auto s0 = sampler.sample();
  CHECK(s0.rss_bytes == 1024 * 1024);
  CHECK(s0.net_rx_bytes == 0);
  CHECK(s0.disk_write_bytes == 0);

  write_file(root / "self/io", "rchar: 1\nwchar: 1\nread_bytes: 5096\nwrite_bytes: 22288\n");
  write_file(root / "net/dev", std::string(kNetDev) + "  eth2: 500 1 0 0 0 0 0 0 70 1 0 0 0 0 0 0\n");
  write_file(root / "self/status", "VmHWM:\t 8192 kB\nVmRSS:\t 4096 kB\n");
  auto s1 = sampler.sample();
  CHECK(s1.disk_read_bytes == 1000);
  CHECK(s1.disk_write_bytes == 10000);
  CHECK(s1.net_rx_bytes == 500);
  CHECK(s1.net_tx_bytes == 70);
  CHECK(s1.lo_rx_bytes == 0);
  CHECK(s1.rss_bytes == 4096 * 1024);

  auto sum = sampler.summary();
  CHECK(sum.peak_rss_bytes == 8192 * 1024);
  CHECK(sum.disk_write_bytes == 10000);
  CHECK(sum.disk_source == DiskSource::Storage);
  CHECK(sum.samples == 3);
  CHECK(sampler.take_new_samples().size() == 3);
  CHECK(sampler.take_new_samples().empty());
  fs::remove_all(root);
}

TEST_CASE("ResourceSampler: missing /proc files read n/a, never throw", "[apps]") {
  auto root = fresh_dir("ddl_empty_proc");
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  opts.proc_root = root.string();
  ResourceSampler sampler(opts);
  ResourceSample s;
  REQUIRE_NOTHROW(s = sampler.sample());
  CHECK(std::isnan(s.cpu_percent));
  CHECK(s.rss_bytes == -1);
  CHECK(s.net_rx_bytes == -1);
  CHECK(s.disk_read_bytes == -1);
  auto sum = sampler.summary();
  CHECK(std::isnan(sum.mean_cpu_percent));
  CHECK(sum.disk_source == DiskSource::None);
  std::string text = sum.to_string();
  CHECK_THAT(text, Catch::Contains("cpu n/a"));
  CHECK_THAT(text, Catch::Contains("disk read n/a"));
  fs::remove_all(root);
}

TEST_CASE("ResourceSampler: CPU % of a busy loop and of a sleep", "[apps]") {
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  ResourceSampler sampler(opts);
  // The oracle: this process's CPU clock over the same interval. A loaded machine may
  // lend us less than a core: then the > 50 % check is retried, and skipped with a
  // warning if the CPU clock itself says we never got the time.
  double busy = 0, reference = 0;
  for (int attempt = 0; attempt < 3 && !(busy > 50); ++attempt) {
    sampler.sample();
    double cpu0 = process_cpu_s();
    auto t0 = std::chrono::steady_clock::now();
    busy_for(0.4);
    busy = sampler.sample().cpu_percent;
    reference =
        100 * (process_cpu_s() - cpu0) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  INFO("busy " << busy << " %, CPU clock says " << reference << " %");
  CHECK(busy == Approx(reference).margin(15));
  if (reference > 60)
    CHECK(busy > 50);
  else
    WARN("the machine is too loaded to give this test a core: busy loop got " << reference << " %");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  double idle = sampler.sample().cpu_percent;
  INFO("idle " << idle << " %");
  CHECK(idle < 20);
  auto sum = sampler.summary();
  CHECK(sum.max_cpu_percent >= busy - 1e-9);
  CHECK(sum.mean_cpu_percent > 0);
  CHECK(sum.mean_cpu_percent < sum.max_cpu_percent);
}

TEST_CASE("ResourceSampler: the background thread samples every interval", "[apps]") {
  ResourceSamplerOptions opts;
  opts.interval_s = 0.05;
  ResourceSampler sampler(opts);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  sampler.stop();
  auto n = sampler.samples().size();
  CHECK(n >= 3);
  CHECK(n <= 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(sampler.samples().size() == n);  // stopped
}

TEST_CASE("ResourceSampler: resident memory grows after touching 200 MB", "[apps]") {
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  ResourceSampler sampler(opts);
  auto before = sampler.sample();
  REQUIRE(before.rss_bytes > 0);
  const size_t n = 200u << 20;
  std::vector<char> buf(n);
  std::memset(buf.data(), 1, n);  // touch every page
  auto after = sampler.sample();
  INFO("rss " << before.rss_bytes << " -> " << after.rss_bytes);
  CHECK(after.rss_bytes - before.rss_bytes > 150e6);
  CHECK(after.peak_rss_bytes >= after.rss_bytes);
  volatile char sink = buf[n / 2];
  (void)sink;
}

TEST_CASE("ResourceSampler: disk bytes grow after writing and fsyncing 20 MB", "[apps]") {
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  ResourceSampler sampler(opts);
  if (sampler.disk_source() == DiskSource::None) {
    WARN("/proc/self/io is unreadable here: skipped");
    return;
  }
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
