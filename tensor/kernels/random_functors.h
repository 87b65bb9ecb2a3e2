// Philox-4x32-10 and the transforms from its output to rand/randn/bernoulli/
// randint/uniform_ values, shared by the CPU draws (tensor/core/random.cpp) and the
// CUDA kernel (tensor/cuda/random.cu): one definition, compiled for both, so a
// draw gives the same numbers on every device for the same (seed, offset).
// No generator state here (see Generator in tensor/core/random.h).
#pragma once

#include <cmath>
#include <cstdint>

#include <ddl/tensor/kernels/functors.h>  // DDL_HOST_DEVICE

namespace ddl::random_math {

// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11) on the 128-bit counter (ctr, 0) with the 64-bit key `seed`.
DDL_HOST_DEVICE void philox4x32_10(uint64_t ctr, uint64_t seed, uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  uint32_t c0 = static_cast<uint32_t>(ctr), c1 = static_cast<uint32_t>(ctr >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c0, p1 = static_cast<uint64_t>(kM1) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0, n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

// Uniform in [0, 1) with 24 (float) or 53 (double) random bits: exact in double.
DDL_HOST_DEVICE double to_unit(uint32_t hi, uint32_t lo, bool dbl) {
  if (dbl) return static_cast<double>((static_cast<uint64_t>(hi) << 21) ^ (lo >> 11)) * 0x1.0p-53;
  return static_cast<double>(hi >> 8) * 0x1.0p-24;
}

// What one element of a draw becomes, from the two uniforms u0, u1 of its counter.
enum class Dist : uint8_t { Uniform, Normal, Bernoulli, RandInt };
struct Transform {
  Dist dist = Dist::Uniform;
  double a = 0.0, b = 1.0;  // Uniform: [a, b); Bernoulli: p = a; RandInt: low = a, high = b
  // Nonzero: u0 keeps only this many random bits (the significand of a 16-bit float),
  // so it is exact in that type and a [0, 1) draw never rounds up to 1, as PyTorch's
  // uniform_real_distribution takes numeric_limits<T>::digits bits.
  int bits = 0;
  DDL_HOST_DEVICE double operator()(double u0, double u1) const {
    switch (dist) {
      case Dist::Uniform:  // one rounding on every compiler: an explicit fma, never a contraction choice
        return std::fma(b - a, u0, a);
      case Dist::Normal:  // Box-Muller on (1 - u0) in (0, 1], so the log is finite
        return std::sqrt(-2.0 * std::log(1.0 - u0)) * std::cos(2.0 * 3.14159265358979323846 * u1);
      case Dist::Bernoulli:
        return u0 < a ? 1.0 : 0.0;
      case Dist::RandInt: {
        const double span = b - a;
        const int64_t k = static_cast<int64_t>(u0 * span), top = static_cast<int64_t>(span) - 1;
        return a + static_cast<double>(k < top ? k : top);
      }
    }
    return 0.0;
  }
};

// Element i of a draw starting at counter `offset`: counter offset + i, whose four
// lanes give u0 (lanes 0, 1) and u1 (lanes 2, 3). Every device computes exactly this.
DDL_HOST_DEVICE double draw_element(uint64_t seed, uint64_t offset, int64_t i, bool dbl, const Transform& t) {
  uint32_t r[4];
  philox4x32_10(offset + static_cast<uint64_t>(i), seed, r);
  const double u0 =
      t.bits > 0 ? static_cast<double>(r[0] >> (32 - t.bits)) * std::ldexp(1.0, -t.bits) : to_unit(r[0], r[1], dbl);
  return t(u0, to_unit(r[2], r[3], dbl));
}

}  // namespace ddl::random_math
