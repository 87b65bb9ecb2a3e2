#pragma once
// Which instruction-set level the hand-written CPU kernels run at. One build carries
// kernels for AVX2+FMA and AVX-512 (each compiled with its own flags, tensor/meson.build)
// and a portable fallback; the level is chosen once, from what the CPU reports, as
// oneDNN and OpenBLAS do. DDL_CPU_LEVEL=baseline|avx2|avx512 forces a level (for
// comparisons); asking for one this CPU cannot run is an error, never a SIGILL.
#include <string>

namespace ddl::cpu {

enum class CpuLevel { baseline = 0, avx2 = 1, avx512 = 2 };

const char* cpu_level_name(CpuLevel level);         // "baseline", "avx2", "avx512"
CpuLevel parse_cpu_level(const std::string& name);  // the inverse; ddl::Error on other names
bool cpu_runs(CpuLevel level);                      // this CPU (and OS) supports the level's instructions
CpuLevel best_cpu_level();                          // the highest level cpu_runs
// The level in use: DDL_CPU_LEVEL when set (checked), else best_cpu_level().
CpuLevel cpu_level();
// Overrides the level in use (tests and benchmarks); ddl::Error when !cpu_runs(level).
void set_cpu_level(CpuLevel level);
// One line for run headers: the level and which kernels it selects, e.g.
// "avx512 (sgemm 8x32 AVX-512 micro-kernel, 2x2 max pool AVX-512)".
std::string cpu_kernels_summary();

}  // namespace ddl::cpu
