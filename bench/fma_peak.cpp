// FMA peak per instruction-set level. Each loop runs kChains independent chains
// (enough to cover the FMA latency on two pipes: 4-5 cycles x 2) and an empty asm
// statement that claims to read and write every chain each iteration, so no chain can
// be dropped or merged by the compiler; all chains are then summed into the result.
// The AVX loops use target attributes, so the portable build carries them too.
#include "bench/fma_peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>

namespace ddl::bench {
namespace {

constexpr int kChains = 10;

__attribute__((target("avx512f"))) float chains_avx512(long iters) {
  const __m512 x = _mm512_set1_ps(0.9999999f), y = _mm512_set1_ps(1e-8f);
  __m512 a0 = x, a1 = x, a2 = x, a3 = x, a4 = x, a5 = x, a6 = x, a7 = x, a8 = x, a9 = x;
  for (long i = 0; i < iters; ++i) {
    a0 = _mm512_fmadd_ps(a0, x, y), a1 = _mm512_fmadd_ps(a1, x, y), a2 = _mm512_fmadd_ps(a2, x, y);
    a3 = _mm512_fmadd_ps(a3, x, y), a4 = _mm512_fmadd_ps(a4, x, y), a5 = _mm512_fmadd_ps(a5, x, y);
    a6 = _mm512_fmadd_ps(a6, x, y), a7 = _mm512_fmadd_ps(a7, x, y), a8 = _mm512_fmadd_ps(a8, x, y);
    a9 = _mm512_fmadd_ps(a9, x, y);
    __asm__ volatile(""
                     : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7), "+v"(a8),
                       "+v"(a9));
  }
  const __m512 s =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                    _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)), _mm512_add_ps(a8, a9)));
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float chains_avx2(long iters) {
  const __m256 x = _mm256_set1_ps(0.9999999f), y = _mm256_set1_ps(1e-8f);
  __m256 a0 = x, a1 = x, a2 = x, a3 = x, a4 = x, a5 = x, a6 = x, a7 = x, a8 = x, a9 = x;
  for (long i = 0; i < iters; ++i) {
    a0 = _mm256_fmadd_ps(a0, x, y), a1 = _mm256_fmadd_ps(a1, x, y), a2 = _mm256_fmadd_ps(a2, x, y);
    a3 = _mm256_fmadd_ps(a3, x, y), a4 = _mm256_fmadd_ps(a4, x, y), a5 = _mm256_fmadd_ps(a5, x, y);
    a6 = _mm256_fmadd_ps(a6, x, y), a7 = _mm256_fmadd_ps(a7, x, y), a8 = _mm256_fmadd_ps(a8, x, y);
    a9 = _mm256_fmadd_ps(a9, x, y);
    __asm__ volatile(""
                     : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7), "+x"(a8),
                       "+x"(a9));
  }
  const __m256 s =
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                    _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)), _mm256_add_ps(a8, a9)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

// SSE2, which every x86-64 has: 4 lanes, multiply then add (no FMA at this level).
float chains_baseline(long iters) {
  const __m128 x = _mm_set1_ps(0.9999999f), y = _mm_set1_ps(1e-8f);
  __m128 a0 = x, a1 = x, a2 = x, a3 = x, a4 = x, a5 = x, a6 = x, a7 = x, a8 = x, a9 = x;
  for (long i = 0; i < iters; ++i) {
    a0 = _mm_add_ps(_mm_mul_ps(a0, x), y), a1 = _mm_add_ps(_mm_mul_ps(a1, x), y);
    a2 = _mm_add_ps(_mm_mul_ps(a2, x), y), a3 = _mm_add_ps(_mm_mul_ps(a3, x), y);
    a4 = _mm_add_ps(_mm_mul_ps(a4, x), y), a5 = _mm_add_ps(_mm_mul_ps(a5, x), y);
    a6 = _mm_add_ps(_mm_mul_ps(a6, x), y), a7 = _mm_add_ps(_mm_mul_ps(a7, x), y);
    a8 = _mm_add_ps(_mm_mul_ps(a8, x), y), a9 = _mm_add_ps(_mm_mul_ps(a9, x), y);
    __asm__ volatile(""
                     : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7), "+x"(a8),
                       "+x"(a9));
  }
  const __m128 s = _mm_add_ps(_mm_add_ps(_mm_add_ps(a0, a1), _mm_add_ps(a2, a3)),
                              _mm_add_ps(_mm_add_ps(_mm_add_ps(a4, a5), _mm_add_ps(a6, a7)), _mm_add_ps(a8, a9)));
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

}  // namespace

double fma_peak_gflops(ddl::cpu::CpuLevel level, int threads, long iters, int reps) {
  using ddl::cpu::CpuLevel;
  const int lanes = level == CpuLevel::avx512 ? 16 : level == CpuLevel::avx2 ? 8 : 4;
  double best = 0;
  volatile float sink = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
    sum += level == CpuLevel::avx512 ? chains_avx512(iters)
           : level == CpuLevel::avx2 ? chains_avx2(iters)
                                     : chains_baseline(iters);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sink = sink + sum;
    best = std::max(best, 2.0 * kChains * lanes * double(iters) * threads / secs / 1e9);
  }
  return best;
}

}  // namespace ddl::bench
