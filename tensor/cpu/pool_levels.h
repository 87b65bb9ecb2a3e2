#pragma once
// The 2x2, stride-2, unpadded max pool of one output row, per instruction-set level
// (cpu_level.h), for pool.cpp. Same choices as pool.cpp's scalar loop: candidates in
// window order, strict >, NaN wins; idx = top + offset of the maximum in the plane.
// r0, r1: the two input rows; Q outputs; W: the input row length. Each lives in a file
// compiled with its level's flags (sgemm_levels.h says why the rest is file-local).
#include <cstdint>

namespace ddl::cpu::isa {

void max2x2_row_avx512(const float* r0, const float* r1, int64_t Q, int64_t top, int64_t W, float* y, int64_t* idx);
void max2x2_row_avx2(const float* r0, const float* r1, int64_t Q, int64_t top, int64_t W, float* y, int64_t* idx);

}  // namespace ddl::cpu::isa
