// Measures the fp32 FMA peak: independent FMA chains on vector registers,
// enough of them to cover the FMA latency, on every thread at once.
#include <omp.h>

#include <chrono>
#include <cstdio>

#include "bench/bench_util.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace {

// FLOPs done by one call: chains x lanes x 2 (multiply + add) x iterations.
double fma_loop(long iters, float* sink) {
#if defined(__AVX512F__)
  constexpr int kChains = 12, kLanes = 16;
  __m512 acc[kChains];
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (long i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  alignas(64) float lanes[kLanes];
  _mm512_store_ps(lanes, s);  // (GCC 12's _mm512_reduce_add_ps trips -Werror=uninitialized)
  *sink = lanes[0] + lanes[kLanes - 1];
#else
  constexpr int kChains = 16, kLanes = 8;
  float acc[kChains][kLanes] = {};
  for (long i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c)
#pragma omp simd
      for (int l = 0; l < kLanes; ++l) acc[c][l] = acc[c][l] * 0.999999f + 1e-7f;
  *sink = acc[0][0];
#endif
  return 2.0 * kChains * kLanes * static_cast<double>(iters);
}

}  // namespace

int peak_main(int argc, char** argv) {
  const int threads = ddl::bench::threads_arg(argc, argv, omp_get_max_threads());
  const long iters = 50'000'000;
  float sinks[64] = {};
  double flops = 0;
  const double secs = ddl::bench::median_seconds(3, [&] {
    flops = 0;
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    flops += fma_loop(iters, &sinks[omp_get_thread_num() % 64]);
  });
  std::printf("{\"bench\":\"fma_peak\",\"threads\":%d,\"gflops\":%.1f}\n", threads, flops / secs / 1e9);
  return 0;
}
