#pragma once
// Column sums of a float32 [A, C] matrix in double (sum_middle's bias-gradient case,
// reduce.cpp) per instruction-set level (cpu_level.h), each in a file compiled with its
// level's flags (sgemm_levels.h says why the rest is file-local). s[j] += in[a, c0 + j] for
// a in order and j < w: the same additions in the same order at every level, so the same bits.
#include <cstdint>

namespace ddl::cpu::isa {

void sum_cols_f32_avx512(const float* in, int64_t A, int64_t C, int64_t c0, int64_t w, double* s);
void sum_cols_f32_avx2(const float* in, int64_t A, int64_t C, int64_t c0, int64_t w, double* s);

}  // namespace ddl::cpu::isa
