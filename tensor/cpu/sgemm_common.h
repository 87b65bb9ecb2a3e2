#pragma once
// Helpers and the blocked loop nest shared by the AVX2 and AVX-512 sgemm files (sgemm_avx2.cpp, sgemm_avx512.cpp)
// and included by them only: everything here is in an anonymous namespace, so each
// file compiles its own copy with its own instruction-set flags (sgemm_levels.h says why).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
#if defined(_OPENMP)
#include <omp.h>
#endif

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

// Split [0, n) into `parts` near-equal contiguous ranges; range `i`.
inline std::pair<int64_t, int64_t> split(int64_t n, int parts, int i) { return {n * i / parts, n * (i + 1) / parts}; }
// Block size <= cap that splits n into equal-ish blocks, a multiple of `mult`.
inline int64_t balanced_block(int64_t n, int64_t cap, int64_t mult) {
  const int64_t nblk = (n + cap - 1) / cap;
  const int64_t b = (n + nblk - 1) / nblk;
  return std::min(cap, (b + mult - 1) / mult * mult);
}

// The loop nest of Note [sgemm blocking] (sgemm.cpp) around one level's micro-kernel.
// L supplies the blocking (MR, NR, KC, MC, NC), the packing (pack_rows: MR-row panels of
// A; pack_cols: one NR-column panel of B) and tile(pa, R, n, kb, a, a_rs, b, c, ldc,
// alpha, beta, c_next), which computes C[R x n] (+)= A[R x kb] * B[kb x n].
template <class L>
void sgemm_blocked(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
                   const float* B, int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads) {
  constexpr int64_t MR = L::MR, NR = L::NR;
  const bool pa = !(csa == 1 && N <= 2 * NR);  // small N: read row-major A in place
  const int64_t kc = balanced_block(K, L::KC, 8);
  const int64_t mc = balanced_block(M, L::MC, MR);
  const int64_t nc = balanced_block(N, L::NC, NR);
  float* bpack = tl_bpack.get(size_t(kc * nc));
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
  {
    int tid = 0, nth = 1;
#if defined(_OPENMP)
    tid = omp_get_thread_num();
    nth = omp_get_num_threads();
#endif
    // 8 floats of slack: the AVX2 packing stores whole vectors past a 6-row panel's end.
    float* apack = pa ? tl_apack.get(size_t(mc * kc + 8)) : nullptr;
    for (int64_t jc = 0; jc < N; jc += nc) {
      const int64_t nb = std::min(nc, N - jc), np = (nb + NR - 1) / NR;
      for (int64_t pc = 0; pc < K; pc += kc) {
        const int64_t kb = std::min(kc, K - pc);
        const std::pair<int64_t, int64_t> ps = split(np, nth, tid);
        for (int64_t p = ps.first; p < ps.second; ++p)
          L::pack_cols(kb, std::min<int64_t>(NR, nb - p * NR), B + pc * rsb + (jc + p * NR) * csb, rsb, csb,
                       bpack + p * NR * kb);
#pragma omp barrier
        const float beta_k = pc == 0 ? beta : 1.0f;
        const int64_t nmb = (M + mc - 1) / mc;
        const bool split_m = nmb % nth == 0 || nmb >= 4 * nth;
        for (int64_t ib = split_m ? tid : 0; ib < nmb; ib += split_m ? nth : 1) {
          const int64_t ic = ib * mc, mb = std::min(mc, M - ic);
          // Plain variables, not a structured binding: clang before 16 cannot capture those.
          const std::pair<int64_t, int64_t> js = split_m ? std::pair<int64_t, int64_t>{0, np} : split(np, nth, tid);
          const int64_t j0 = js.first, j1 = js.second;
          if (j0 == j1) continue;
          const float* a = A + ic * rsa + pc * csa;
          if (pa) L::pack_rows(mb, kb, a, rsa, csa, apack);
          float* c = C + ic * ldc + jc;
          auto tile = [&](int64_t ir, int64_t jp, int64_t ir_next, int64_t jp_next) {
            L::tile(pa, std::min<int64_t>(MR, mb - ir), std::min<int64_t>(NR, nb - jp * NR), kb,
                    pa ? apack + ir * kb : a + ir * rsa, rsa, bpack + jp * NR * kb, c + ir * ldc + jp * NR, ldc, alpha,
                    beta_k, c + std::min(ir_next, mb - 1) * ldc + std::min(jp_next, j1 - 1) * NR);
          };
          // A micro-panel stays in L1 across jr; B streams from L2/L3 and C is
          // walked row-block by row-block (prefetch friendly; best for small K).
          for (int64_t ir = 0; ir < mb; ir += MR)
            for (int64_t jp = j0; jp < j1; ++jp) jp + 1 < j1 ? tile(ir, jp, ir, jp + 1) : tile(ir, jp, ir + MR, j0);
        }
#pragma omp barrier
      }
    }
  }
}

}  // namespace
}  // namespace ddl::cpu::isa
