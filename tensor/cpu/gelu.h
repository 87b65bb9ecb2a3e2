#pragma once
// Exact GELU, y = x·Φ(x), for contiguous float32 buffers on the CPU (autograd/ops/activation.cpp):
// one pass forward and one backward instead of a chain of elementwise tensor ops. Elements
// are independent, so results do not depend on the thread count.
#include <cstdint>

namespace ddl::cpu {

// y = x·Φ(x) and cdf = Φ(x) = (1 + erf(x/√2))/2 (kept for the backward).
void gelu_forward_f32(const float* x, float* y, float* cdf, int64_t n);
// dx = g·(Φ(x) + x·φ(x)), φ(x) = exp(−x²/2)/√(2π).
void gelu_backward_f32(const float* g, const float* x, const float* cdf, float* dx, int64_t n);

}  // namespace ddl::cpu
