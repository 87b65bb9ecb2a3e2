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

#include <ddl/tensor/cpu/transpose8x8.h>

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
// packed_b: op(B) already packed whole (packed_b_layout; N <= L::NC), or null to pack here.
template <class L>
void sgemm_blocked(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t rsa, int64_t csa,
                   const float* B, int64_t rsb, int64_t csb, float beta, float* C, int64_t ldc, int nthreads,
                   const float* packed_b = nullptr) {
  constexpr int64_t MR = L::MR, NR = L::NR;
  const bool pa = !(csa == 1 && N <= 2 * NR);  // small N: read row-major A in place
  const int64_t kc = balanced_block(K, L::KC, 8);
  const int64_t mc = balanced_block(M, L::MC, MR);
  const int64_t nc = balanced_block(N, L::NC, NR);
  float* bpack = packed_b ? nullptr : tl_bpack.get(size_t(kc * nc));
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
        if (!packed_b)
          for (int64_t p = ps.first; p < ps.second; ++p)
            L::pack_cols(kb, std::min<int64_t>(NR, nb - p * NR), B + pc * rsb + (jc + p * NR) * csb, rsb, csb,
                         bpack + p * NR * kb);
        const float* bp = packed_b ? packed_b + pc * np * NR : bpack;
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
                    pa ? apack + ir * kb : a + ir * rsa, rsa, bp + jp * NR * kb, c + ir * ldc + jp * NR, ldc, alpha,
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

// op(B) [K x N] packed whole, as sgemm_blocked packs it block by block (N <= L::NC): for
// each K block of kc = balanced_block(K, KC, 8) rows (the last one shorter), its NR-column
// panels in order, each [rows][NR] with zeros past N; the block at K offset pc starts at
// pc * np * NR. Returns the floats it takes and sets kc and nr, or 0 where N is too wide.
template <class L>
int64_t packed_b_layout(int64_t K, int64_t N, int64_t* kc, int64_t* nr) {
  if (N > L::NC) return 0;
  *kc = balanced_block(K, L::KC, 8);
  *nr = L::NR;
  return (N + L::NR - 1) / L::NR * L::NR * K;
}

}  // namespace
}  // namespace ddl::cpu::isa
