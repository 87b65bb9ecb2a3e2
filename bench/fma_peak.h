#pragma once
// The fp32 FMA peak of this machine at one instruction-set level (tensor/cpu/cpu_level.h):
// the number every efficiency figure is divided by, for ddl-bench peak and sgemm-scratch.
#include <ddl/tensor/cpu/cpu_level.h>

namespace ddl::bench {

// GFLOP/s of `threads` threads each running independent FMA chains on the level's
// widest vectors (best of `reps` runs of `iters` iterations).
double fma_peak_gflops(ddl::cpu::CpuLevel level, int threads, long iters = 50'000'000, int reps = 3);

}  // namespace ddl::bench
