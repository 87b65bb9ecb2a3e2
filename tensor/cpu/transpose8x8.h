#pragma once
// An 8x8 float transpose in AVX registers, for the level files compiled with AVX2 or
// AVX-512 flags (sgemm_common.h; winograd_tiles.inc and winograd4_tiles.inc, for
// winograd_lanes.inc) and included by them only: it is in
// an anonymous namespace, so each file compiles its own copy with its own flags.
#include <immintrin.h>

#include <cstdint>

namespace ddl::cpu::isa {
namespace {

// out[c] lane r = in[r] lane c: an 8x8 transpose in registers.
inline void transpose8x8_regs(const __m256 in[8], __m256 out[8]) {
  __m256 t[8], u[8];
  for (int r = 0; r < 8; r += 2) {
    u[r] = _mm256_unpacklo_ps(in[r], in[r + 1]);
    u[r + 1] = _mm256_unpackhi_ps(in[r], in[r + 1]);
  }
  for (int r = 0; r < 8; r += 4) {
    t[r] = _mm256_shuffle_ps(u[r], u[r + 2], 0x44);
    t[r + 1] = _mm256_shuffle_ps(u[r], u[r + 2], 0xEE);
    t[r + 2] = _mm256_shuffle_ps(u[r + 1], u[r + 3], 0x44);
    t[r + 3] = _mm256_shuffle_ps(u[r + 1], u[r + 3], 0xEE);
  }
  // t[c] (c < 4) holds column c of rows 0-3 in its low half and column c+4 in
  // its high half; t[c + 4] the same for rows 4-7.
  for (int c = 0; c < 4; ++c) {
    out[c] = _mm256_permute2f128_ps(t[c], t[c + 4], 0x20);
    out[c + 4] = _mm256_permute2f128_ps(t[c], t[c + 4], 0x31);
  }
}

// dst[c * ds + r] = src[r * ss + c] for an 8x8 block.
inline void transpose8x8(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 in[8], out[8];
  for (int r = 0; r < 8; ++r) in[r] = _mm256_loadu_ps(src + r * ss);
  transpose8x8_regs(in, out);
  for (int c = 0; c < 8; ++c) _mm256_storeu_ps(dst + c * ds, out[c]);
}

}  // namespace
}  // namespace ddl::cpu::isa
