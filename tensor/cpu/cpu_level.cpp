// Run-time instruction-set dispatch (cpu_level.h). GCC's and Clang's
// __builtin_cpu_supports read CPUID and, for AVX and AVX-512, whether the OS
// saves the wider registers (XGETBV), so a level it reports never faults.
#include <atomic>
#include <cstdlib>

#include <ddl/base/error.h>
#include <ddl/tensor/cpu/cpu_level.h>

namespace ddl::cpu {
namespace {

CpuLevel level_from_environment() {
  const char* forced = std::getenv("DDL_CPU_LEVEL");
  if (forced == nullptr || *forced == '\0') return best_cpu_level();
  const CpuLevel level = parse_cpu_level(forced);
  DDL_CHECK(cpu_runs(level), "DDL_CPU_LEVEL=", forced, ": this CPU cannot run it (the best it runs is ",
            cpu_level_name(best_cpu_level()), ")");
  return level;
}

std::atomic<int>& level_in_use() {
  static std::atomic<int> level{static_cast<int>(level_from_environment())};
  return level;
}

}  // namespace

const char* cpu_level_name(CpuLevel level) {
  switch (level) {
    case CpuLevel::avx512:
      return "avx512";
    case CpuLevel::avx2:
      return "avx2";
    case CpuLevel::baseline:
      break;
  }
  return "baseline";
}

CpuLevel parse_cpu_level(const std::string& name) {
  for (CpuLevel level : {CpuLevel::baseline, CpuLevel::avx2, CpuLevel::avx512})
    if (name == cpu_level_name(level)) return level;
  DDL_CHECK(false, "cpu level: '", name, "' is not one of baseline, avx2, avx512");
  return CpuLevel::baseline;
}

bool cpu_runs(CpuLevel level) {
  __builtin_cpu_init();
  switch (level) {
    case CpuLevel::avx512:  // what the AVX-512 kernels use: F, and the VL/BW/DQ forms of Skylake-X and Zen 4
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") && cpu_runs(CpuLevel::avx2);
    case CpuLevel::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuLevel::baseline:
      break;
  }
  return true;
}

CpuLevel best_cpu_level() {
  if (cpu_runs(CpuLevel::avx512)) return CpuLevel::avx512;
  if (cpu_runs(CpuLevel::avx2)) return CpuLevel::avx2;
  return CpuLevel::baseline;
}

CpuLevel cpu_level() { return static_cast<CpuLevel>(level_in_use().load(std::memory_order_relaxed)); }

void set_cpu_level(CpuLevel level) {
  DDL_CHECK(cpu_runs(level), "set_cpu_level(", cpu_level_name(level), "): this CPU cannot run it (the best it runs is ",
            cpu_level_name(best_cpu_level()), ")");
  level_in_use().store(static_cast<int>(level), std::memory_order_relaxed);
}

std::string cpu_kernels_summary() {
  switch (cpu_level()) {
    case CpuLevel::avx512:
      return "avx512 (sgemm 8x32 AVX-512 micro-kernel, 2x2 max pool AVX-512)";
    case CpuLevel::avx2:
      return "avx2 (sgemm 6x16 AVX2+FMA micro-kernel, 2x2 max pool AVX2)";
    case CpuLevel::baseline:
      break;
  }
  return "baseline (sgemm through Eigen, scalar 2x2 max pool)";
}

}  // namespace ddl::cpu
