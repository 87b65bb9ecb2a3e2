// The OS figures of ResourceSampler (Note [OS counters] in report/worker_metrics.h): the
// cgroup parsers on fixed text in the kernel's formats (cgroups(7), the kernel's
// cgroup-v2.rst and sched-bwc.rst), throttling read from a fake /proc and cgroup tree with
// the quota on an ancestor, and the live process: page faults after touching fresh memory,
// voluntary switches after sleeping, the tensor allocator's bytes.
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <ddl/report/metrics_log.h>
#include <ddl/report/rank_table.h>
#include <ddl/report/worker_metrics.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl::report;
namespace fs = std::filesystem;

namespace {

// A machine with both hierarchies (this one's layout): v2 without the cpu controller.
const char* kHybridCgroup =
    "12:pids:/user.slice\n4:cpu,cpuacct:/ddlrun-job/host1\n1:name=systemd:/user.slice\n0::/user.slice\n";
const char* kHybridMounts =
    "proc /proc proc rw,nosuid 0 0\n"
    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nosuid,nodev,noexec 0 0\n"
    "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,nodev,noexec,cpu,cpuacct 0 0\n"
    "cgroup /sys/fs/cgroup/pids cgroup rw,nosuid,nodev,noexec,pids 0 0\n";
const char* kV2Stat =
    "usage_usec 1203887\nuser_usec 1000000\nsystem_usec 203887\nnr_periods 120\nnr_throttled 37\n"
    "throttled_usec 2512345\nnr_bursts 0\nburst_usec 0\n";
const char* kV1Stat = "nr_periods 120\nnr_throttled 37\nthrottled_time 2512345678\nnr_bursts 0\nburst_time 0\n";

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

TEST_CASE("cgroup parsers: fixed text in the kernel's formats", "[report]") {
  CgroupPaths p = parse_proc_cgroup(kHybridCgroup);
  CHECK(p.v2 == "/user.slice");
  CHECK(p.v1_cpu == "/ddlrun-job/host1");
  p = parse_proc_cgroup("0::/system.slice/ddl.service\n");  // v2 only
  CHECK(p.v2 == "/system.slice/ddl.service");
  CHECK(p.v1_cpu.empty());
  CHECK(parse_proc_cgroup("garbage\n").v2.empty());

  CgroupMounts m = parse_cgroup_mounts(kHybridMounts);
  CHECK(m.v2 == "/sys/fs/cgroup/unified");
  CHECK(m.v1_cpu == "/sys/fs/cgroup/cpu,cpuacct");
  m = parse_cgroup_mounts("cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
  CHECK(m.v2 == "/sys/fs/cgroup");
  CHECK(m.v1_cpu.empty());

  CHECK(parse_cpu_quota("max 100000\n") == false);
  CHECK(parse_cpu_quota("50000 100000\n") == true);
  CHECK(parse_cpu_quota("-1\n") == false);  // v1 cpu.cfs_quota_us
  CHECK(parse_cpu_quota("25000\n") == true);
  CHECK_FALSE(parse_cpu_quota(""));

  auto v2 = parse_cgroup_cpu_stat(kV2Stat);
  REQUIRE(v2);
  CHECK(v2->nr_throttled == 37);
  CHECK(v2->throttled_us == 2512345);
  auto v1 = parse_cgroup_cpu_stat(kV1Stat);  // nanoseconds
  REQUIRE(v1);
  CHECK(v1->nr_throttled == 37);
  CHECK(v1->throttled_us == 2512345);
  CHECK_FALSE(parse_cgroup_cpu_stat("usage_usec 5\nnr_periods 0\n"));  // no quota accounting
}

TEST_CASE("ResourceSampler: throttling of the nearest cgroup with a quota, as deltas", "[report]") {
  auto root = fresh_dir("ddl_fake_cgroup");
  const fs::path proc = root / "proc", sys = root / "sys";
  write_file(proc / "self/cgroup", "0::/job/host1\n");
  write_file(proc / "self/mounts", "cgroup2 /fs/cgroup cgroup2 rw 0 0\n");
  write_file(sys / "fs/cgroup/cpu.max", "max 100000\n");
  write_file(sys / "fs/cgroup/job/cpu.max", "50000 100000\n");  // the quota is the parent's
  write_file(sys / "fs/cgroup/job/cpu.stat", "nr_throttled 5\nthrottled_usec 1000\n");
  write_file(sys / "fs/cgroup/job/host1/cpu.max", "max 100000\n");
  write_file(sys / "fs/cgroup/job/host1/cpu.stat", "nr_throttled 0\nthrottled_usec 0\n");
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  opts.proc_root = proc.string();
  opts.cgroup_root = sys.string();
  ResourceSampler sampler(opts);
  CHECK(sampler.sample().os.throttled_periods == 0);
  write_file(sys / "fs/cgroup/job/cpu.stat", "nr_throttled 9\nthrottled_usec 251000\n");
  auto s = sampler.sample();
  CHECK(s.os.throttled_periods == 4);
  CHECK(s.os.throttled_us == 250000);
  auto sum = sampler.summary();
  CHECK(sum.os.throttled_us == 250000);
  CHECK(to_json(sum)["cgroup_throttled_s"] == 0.25);
  auto row = make_rank_summary(sum, EpochTimes{}, nullptr, std::nan(""), std::nan(""), 1);
  CHECK(row[RankField::ThrottledMs] == 250);
  CHECK(row[RankField::ThrottledPeriods] == 4);

  // No quota anywhere: n/a, not 0.
  write_file(sys / "fs/cgroup/job/cpu.max", "max 100000\n");
  ResourceSampler unlimited(opts);
  s = unlimited.sample();
  CHECK(s.os.throttled_periods == -1);
  CHECK(s.os.throttled_us == -1);
  CHECK(to_json(s)["cgroup_throttled_s"].is_null());
  CHECK_THAT(format_rank_table({make_rank_summary(unlimited.summary(), EpochTimes{}, nullptr, 0, 0, 1)}),
             Catch::Contains("throttled ms"));
  fs::remove_all(root);
}

TEST_CASE("ResourceSampler: switches, faults and the allocator's bytes of this process", "[report]") {
  ResourceSamplerOptions opts;
  opts.interval_s = 0;
  ResourceSampler sampler(opts);
  auto before = sampler.sample();
  CHECK(before.os.voluntary_switches >= 0);
  for (int i = 0; i < 20; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // each one waits
  const size_t n = 64u << 20;
  void* fresh = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(fresh != MAP_FAILED);
  // With transparent huge pages "always", one fault maps 2 MiB (32 for all of it):
  // 4 KiB pages only (madvise(2)), so each page's first touch is one minor fault.
  madvise(fresh, n, MADV_NOHUGEPAGE);
  std::memset(fresh, 1, n);                         // first touch of every page: minor faults
  ddl::Tensor t = ddl::zeros(ddl::Shape{1 << 20});  // 4 MB through the CPU allocator
  auto after = sampler.sample();
  munmap(fresh, n);
  CHECK(after.os.voluntary_switches >= 20);
  CHECK(after.os.minor_faults >= int64_t(n / 4096) / 2);
  CHECK(after.os.major_faults >= 0);
  CHECK(after.os.involuntary_switches >= 0);
  CHECK(after.os.allocated_bytes >= int64_t(4) << 20);
  CHECK(after.os.reserved_bytes >= after.os.allocated_bytes);
  CHECK(after.os.peak_allocated_bytes >= after.os.allocated_bytes);
  auto j = to_json(after);
  CHECK(j["voluntary_ctxt_switches"].get<int64_t>() >= 20);
  CHECK(j["tensor_peak_allocated_bytes"].get<int64_t>() >= j["tensor_allocated_bytes"].get<int64_t>());
}
