#pragma once
// Helpers shared by the AVX2 and AVX-512 sgemm files (sgemm_avx2.cpp, sgemm_avx512.cpp)
// and included by them only: everything here is in an anonymous namespace, so each
// file compiles its own copy with its own instruction-set flags (sgemm_levels.h says why).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace ddl::cpu::isa {
namespace {

// 64-byte aligned growable scratch, one per thread, kept across calls.
struct Scratch {
  float* p = nullptr;
  size_t n = 0;
  float* get(size_t need) {
    if (need > n) {
      std::free(p);
      p = static_cast<float*>(std::aligned_alloc(64, (need * sizeof(float) + 63) / 64 * 64));
      n = need;
    }
    return p;
  }
  ~Scratch() { std::free(p); }
};
thread_local Scratch tl_apack, tl_bpack;

// dst[c * ds + r] = src[r * ss + c] for an 8x8 block.
inline void transpose8x8(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 t[8], u[8];
  for (int r = 0; r < 8; ++r) t[r] = _mm256_loadu_ps(src + r * ss);
  for (int r = 0; r < 8; r += 2) {
    u[r] = _mm256_unpacklo_ps(t[r], t[r + 1]);
    u[r + 1] = _mm256_unpackhi_ps(t[r], t[r + 1]);
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
    _mm256_storeu_ps(dst + c * ds, _mm256_permute2f128_ps(t[c], t[c + 4], 0x20));
    _mm256_storeu_ps(dst + (c + 4) * ds, _mm256_permute2f128_ps(t[c], t[c + 4], 0x31));
  }
}

// Split [0, n) into `parts` near-equal contiguous ranges; range `i`.
inline std::pair<int64_t, int64_t> split(int64_t n, int parts, int i) { return {n * i / parts, n * (i + 1) / parts}; }
// Block size <= cap that splits n into equal-ish blocks, a multiple of `mult`.
inline int64_t balanced_block(int64_t n, int64_t cap, int64_t mult) {
  const int64_t nblk = (n + cap - 1) / cap;
  const int64_t b = (n + nblk - 1) / nblk;
  return std::min(cap, (b + mult - 1) / mult * mult);
}

}  // namespace
}  // namespace ddl::cpu::isa
