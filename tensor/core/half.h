// Two 16-bit floating-point storage types: IEEE 754 binary16 (Half: 1 sign,
// 5 exponent, 10 mantissa bits) and bfloat16 (BFloat16: float32's top 16 bits).
// Each converts to float exactly and from float with round-to-nearest-even,
// as c10::Half and c10::BFloat16 do. They are storage types only: arithmetic
// converts to float (the implicit operator float) and rounds the result once.
// Usable in host code and in CUDA kernels (DDL_HOST_DEVICE).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <ddl/tensor/kernels/host_device.h>

// Note [Half compute]
// ddl keeps no arithmetic in 16 bits. An op given float16/bfloat16 tensors
// computes in float32 (sums in double, as the float32 kernels; GEMMs in float32)
// and rounds the result to the 16-bit type once. On the CPU, and for operands of
// mixed dtypes, elementwise ops and reductions widen copies in their frontends
// (tensor/ops/elementwise.cpp, reduce.cpp); on CUDA, operands of one 16-bit dtype go
// through one kernel that loads 16 bits, computes in float and stores once, bit
// for bit the same result (tensor/cuda/elementwise.cu, reduce.cu). GEMM and
// conv2d widen in the CPU kernels. The CUDA GEMM and convolution read 16-bit operands
// directly (cuBLAS/cuDNN with float32 compute; cuBLAS's default math may still
// add split-K partial sums in the 16-bit output type, as PyTorch allows by
// default: tensor/cuda/gemm.cpp). This is what PyTorch's CPU
// kernels do for bfloat16 (see "CPU Op-Specific Behavior" in torch.amp's docs),
// so results agree to the last bit wherever the float32 results do.
namespace ddl {

namespace half_detail {

DDL_HOST_DEVICE uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

DDL_HOST_DEVICE float bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// Rounds away the low `shift` bits of q_and_rest to nearest, ties to even.
DDL_HOST_DEVICE uint32_t round_shift(uint32_t value, uint32_t shift) {
  const uint32_t q = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1u);
  const uint32_t half_ulp = 1u << (shift - 1u);
  return q + ((rest > half_ulp || (rest == half_ulp && (q & 1u))) ? 1u : 0u);
}

// float32 -> binary16 bits, round to nearest even. NaN becomes the quiet NaN
// 0x7E00 with the sign kept (as c10's fp16_ieee_from_fp32_value); values from
// 65520 up overflow to infinity; below 2^-14 the result is subnormal.
DDL_HOST_DEVICE uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 (and inf) -> inf
  if (ax >= 0x38800000u)                                                // normal: rebias 127 -> 15
    return static_cast<uint16_t>(sign | round_shift(ax - 0x38000000u, 13));
  if (ax < 0x33000000u) return static_cast<uint16_t>(sign);  // below 2^-25 (2^-25 itself ties to 0)
  // Subnormal: the value in units of 2^-24 is mantissa * 2^(e - 126), e in [102, 112].
  const uint32_t e = ax >> 23;
  const uint32_t mantissa = (ax & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | round_shift(mantissa, 126u - e));
}

// binary16 bits -> float32, exact.
DDL_HOST_DEVICE float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN (payload kept)
  if (exponent != 0) return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_float(sign);
  // Subnormal: normalise so the leading 1 moves to bit 10.
  uint32_t e = 113;
  while ((mantissa & 0x400u) == 0) mantissa <<= 1, --e;
  return bits_float(sign | (e << 23) | ((mantissa & 0x3ffu) << 13));
}

// float32 -> bfloat16 bits, round to nearest even; every NaN becomes 0x7FC0
// (as c10::detail::round_to_nearest_even).
DDL_HOST_DEVICE uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

DDL_HOST_DEVICE float bfloat16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

}  // namespace half_detail

struct FromBits {};  // tag: construct from the raw 16-bit pattern

// IEEE 754 binary16.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  DDL_HOST_DEVICE constexpr Half(uint16_t raw, FromBits) : bits(raw) {}
  DDL_HOST_DEVICE Half(float f) : bits(half_detail::float_to_half_bits(f)) {}
  // Other arithmetic types go through float, as static_cast<c10::Half>(double) does.
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, float>, int> = 0>
  DDL_HOST_DEVICE explicit Half(T v) : Half(static_cast<float>(v)) {}
  DDL_HOST_DEVICE operator float() const { return half_detail::half_bits_to_float(bits); }
};

// bfloat16: float32 with the low 16 mantissa bits rounded away.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  DDL_HOST_DEVICE constexpr BFloat16(uint16_t raw, FromBits) : bits(raw) {}
  DDL_HOST_DEVICE BFloat16(float f) : bits(half_detail::float_to_bfloat16_bits(f)) {}
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, float>, int> = 0>
  DDL_HOST_DEVICE explicit BFloat16(T v) : BFloat16(static_cast<float>(v)) {}
  DDL_HOST_DEVICE operator float() const { return half_detail::bfloat16_bits_to_float(bits); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types must be 2 bytes");

}  // namespace ddl
