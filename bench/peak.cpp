// ddl-bench peak: the fp32 FMA peak at the instruction-set level the kernels run at
// (DDL_CPU_LEVEL picks another), on every thread at once.
#include <omp.h>

#include <cstdio>

#include "bench/bench_util.h"
#include "bench/fma_peak.h"

int peak_main(int argc, char** argv) {
  const int threads = ddl::bench::threads_arg(argc, argv, omp_get_max_threads());
  const ddl::cpu::CpuLevel level = ddl::cpu::cpu_level();
  const double gflops = ddl::bench::fma_peak_gflops(level, threads);
  std::printf("{\"bench\":\"fma_peak\",\"cpu_level\":\"%s\",\"threads\":%d,\"gflops\":%.1f}\n",
              ddl::cpu::cpu_level_name(level), threads, gflops);
  return 0;
}
