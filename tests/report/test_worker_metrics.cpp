// ResourceSampler and its /proc parsers: synthetic /proc text with known numbers, a
// fake /proc tree (deltas, missing files → n/a), and the live process: the sampling
// thread, RSS after touching 200 MB. CPU % and disk bytes, which need what a machine may
// not give (a free core, /proc/self/io), are test_sampler_cpu.cpp and test_sampler_disk.cpp.
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

#include <ddl/report/worker_metrics.h>

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
