#pragma once
// The float32 exact-GELU loops of tensor/cpu/gelu.h per instruction-set level (cpu_level.h),
// each in a file compiled with its level's flags (sgemm_levels.h says why the rest is
// file-local). Same formulas as the SSE2 ones of vec_math.h, wider and with FMA, so the last
// bits depend on the level, never on the thread count: [b, e) is one thread's chunk.
#include <cstdint>

namespace ddl::cpu::isa {

void gelu_forward_avx512(const float* x, float* y, float* cdf, int64_t b, int64_t e);
void gelu_backward_avx512(const float* g, const float* x, const float* cdf, float* dx, int64_t b, int64_t e);
void gelu_forward_avx2(const float* x, float* y, float* cdf, int64_t b, int64_t e);
void gelu_backward_avx2(const float* g, const float* x, const float* cdf, float* dx, int64_t b, int64_t e);

}  // namespace ddl::cpu::isa
