// Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions for float32, vectorised over 16
// channels (the tile arithmetic per instruction-set level: winograd_tiles.h,
// winograd4_tiles.h). This file drives both: staging, chunks and the GEMMs.
//
// Note [Winograd F(2x2, 3x3)]
// Each 2x2 output tile of a 3x3 stride-1 conv is A^T [(G g G^T) . (B^T d B)] A
// for its 4x4 input patch d, so the channel sums become 16 GEMMs, one per
// transform point xi: M[xi][tile, o] = sum_i V[xi][tile, i] U[xi][o, i], with
// 16 O I multiplies per tile instead of 36 (2.25x fewer FLOPs). The weight
// gradient is the adjoint: dU[xi] = dM[xi]^T V[xi] with dM = A dY A^T, then
// dg = G^T dU G. The input gradient is a conv of dY with the kernel rotated by
// 180 degrees and its channel dims swapped: the weights' transform reads w's taps
// rotated, and its GEMMs take it untransposed.
// Layouts keep channels innermost (V [16][T][I], M [16][T][O]), so every
// transform works on whole 16-channel vectors: images are first staged, zero
// padded, as [rows][cols][channels] (channels-last). The transforms
// use only additions and halves: float32 error stays ~1e-6 relative.
// Images go in chunks of about kTargetTiles tiles; chunk sizes depend only on
// the shapes and every sum has a fixed order, so results do not depend on the
// thread count (as Note [Conv chunks] in conv2d.cpp).
// F(4x4, 3x3) (Note [Winograd F(4x4, 3x3)] in winograd4_tiles.inc) runs the same
// way with m = 4: 6x6 patches, 36 GEMMs; which one a layer takes is tile_size().
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/sgemm.h>
#include <ddl/tensor/cpu/winograd.h>
#include <ddl/tensor/cpu/winograd4_tiles.h>
#include <ddl/tensor/cpu/winograd_tiles.h>

namespace ddl::cpu::winograd {
namespace {

constexpr int64_t kLanes = 16;
// Tiles per forward (and input-gradient) chunk, for both tile sizes. An F(4x4) chunk then
// holds 4x the outputs of an F(2x2) one and 2.25x its scratch. When the GEMMs still packed
// the transformed weights per chunk, a quarter as many tiles made the VGG-11-BN step 3-8%
// slower; with the weights packed once (Note [Winograd weights packed once]) 64, 128 and
// 256 tiles measured the same. The weight gradient sizes its chunks by kWeightGradScratchBytes.
constexpr int64_t kTargetTiles = 256;
// The weight gradient's GEMMs sum over tiles: bigger chunks make longer sums
// and fewer passes over dU, up to this much scratch.
constexpr int64_t kWeightGradScratchBytes = 8 << 20;

// The variant: output tile side m (2 or 4), transform points (m + 2)^2, tile arithmetic.
struct Variant {
  int64_t m, points;
  const isa::WinogradTiles* k;
};

// m x m output tiles: TP x TQ of them per image, nb images per chunk.
struct Tiling {
  int64_t m, TP, TQ, nb, chunks;
  Tiling(const Geom& g, int64_t m_, int64_t target_tiles) : m(m_) {
    TP = (g.P + m - 1) / m, TQ = (g.Q + m - 1) / m;
    nb = std::clamp<int64_t>(target_tiles / (TP * TQ), 1, g.N);
    chunks = (g.N + nb - 1) / nb;
  }
  int64_t per_image() const { return TP * TQ; }
};

int64_t padded(int64_t channels) { return (channels + kLanes - 1) / kLanes * kLanes; }

// F(m x m, 3x3) with the tile arithmetic compiled for the CPU's level.
Variant variant(int m) {
  DDL_ASSERT(m == 2 || m == 4, "winograd: tile size ", m);
  const bool four = m == 4;
  switch (cpu_level()) {
    case CpuLevel::avx512:
      return {m, (m + 2) * (m + 2), four ? &isa::winograd4_tiles_avx512 : &isa::winograd_tiles_avx512};
    case CpuLevel::avx2:
      return {m, (m + 2) * (m + 2), four ? &isa::winograd4_tiles_avx2 : &isa::winograd_tiles_avx2};
    case CpuLevel::baseline:
      break;
  }
  return {m, (m + 2) * (m + 2), four ? &isa::winograd4_tiles_baseline : &isa::winograd_tiles_baseline};
}

// Runs fn(n, buf) for every image n of a chunk, in parallel, with a
// per-thread buffer of `floats` floats.
template <typename Fn>
void for_each_image(int64_t nb, int64_t floats, const Fn& fn) {
  parallel_for(0, nb, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<float> buf;
    buf.resize(floats);
    for (int64_t n = b; n < e; ++n) fn(n, buf.data());
  });
}

// V [points][T][C] = B^T d B of every tile of images n0 + [0, nb) of x [N, C, H, W];
// false when one of those images held an inf or a NaN.
bool input_transform(const Variant& v, const float* x, int64_t C, int64_t H, int64_t W, int64_t ph, int64_t pw,
                     const Tiling& t, int64_t n0, int64_t nb, float* V) {
  const int64_t T = nb * t.per_image(), Hp = t.m * t.TP + 2, Wp = t.m * t.TQ + 2, Cp = padded(C);
  const isa::WinogradTiles& k = *v.k;
  std::atomic<bool> finite{true};
  for_each_image(nb, Hp * Wp * Cp, [&](int64_t n, float* buf) {
    if (!k.stage(x + (n0 + n) * C * H * W, C, H, W, ph, pw, Hp, Wp, buf)) finite.store(false);
    k.input(buf, C, Wp, t.TP, t.TQ, n * t.per_image(), T, V);
  });
  return finite.load();
}

// y images n0 + [0, nb) of [N, O, P, Q] = A^T m A (+ bias) of M [points][T][O].
void output_transform(const Variant& v, const float* M, const float* bias, int64_t O, int64_t P, int64_t Q,
                      const Tiling& t, int64_t n0, int64_t nb, float* y) {
  const int64_t T = nb * t.per_image(), Pp = t.m * t.TP, Qp = t.m * t.TQ, Op = padded(O);
  std::vector<float> bias_lanes(Op, 0.0f);
  if (bias) std::copy(bias, bias + O, bias_lanes.begin());
  const isa::WinogradTiles& k = *v.k;
  for_each_image(nb, Pp * Qp * Op, [&](int64_t n, float* buf) {
    k.output(M, bias_lanes.data(), O, Qp, t.TP, t.TQ, n * t.per_image(), T, buf);
    k.unstage(buf, O, P, Q, Qp, y + (n0 + n) * O * P * Q);
  });
}

// dM [points][T][O] = A dY A^T of every m x m tile of gy images n0 + [0, nb) (zero past P, Q);
// false when one of those images held an inf or a NaN.
bool grad_transform(const Variant& v, const float* gy, int64_t O, int64_t P, int64_t Q, const Tiling& t, int64_t n0,
                    int64_t nb, float* dM) {
  const int64_t T = nb * t.per_image(), Pp = t.m * t.TP, Qp = t.m * t.TQ, Op = padded(O);
  const isa::WinogradTiles& k = *v.k;
  std::atomic<bool> finite{true};
  for_each_image(nb, Pp * Qp * Op, [&](int64_t n, float* buf) {
    if (!k.stage(gy + (n0 + n) * O * P * Q, O, P, Q, 0, 0, Pp, Qp, buf)) finite.store(false);
    k.grad(buf, O, Qp, t.TP, t.TQ, n * t.per_image(), T, dM);
  });
  return finite.load();
}

// Scratch for one chunk: two [points][T][channels] arrays, plus one vector of slack
// because the transforms load whole 16-lane vectors at the last channel block.
struct ChunkScratch {
  Tensor buf;
  float* a;
  float* b;
  ChunkScratch(int64_t points, int64_t T, int64_t ca, int64_t cb) {
    buf = empty({points * T * (ca + cb) + 2 * kLanes});
    a = buf.data<float>();
    b = a + points * T * ca + kLanes;
  }
};

// G of F(m x m, 3x3): (m + 2) x 3 (the Notes above and in winograd4_tiles.inc).
std::vector<float> make_kron(int64_t m, bool rotated) {
  static constexpr double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double g4[6][3] = {{1, 0, 0},
                                      {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                      {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                                      {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                                      {1.0 / 15, -2.0 / 15, 4.0 / 15},
                                      {0, 0, 1}};
  const int64_t n = m + 2;
  auto G = [&](int64_t a, int r) { return m == 2 ? g2[a][r] : g4[a][r]; };
  std::vector<float> k(size_t(n * n * 9));
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < n; ++b)
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s)
          k[size_t((a * n + b) * 9 + r * 3 + s)] = float(rotated ? G(a, 2 - r) * G(b, 2 - s) : G(a, r) * G(b, s));
  return k;
}

// Note [Winograd weights packed once]
// Each chunk's GEMM of point xi reads the same B: the transformed weights. sgemm packs
// its B operand into panels per call, so per chunk; and for the 4x4 and 2x2 maps of
// VGG-style nets, where a chunk is the whole batch at 1 to 4 tiles an image, the
// transform plus that packing was as much work as the GEMMs (O I of B against 64 T).
// So where the CPU level's sgemm has a packed form (sgemm.h, PackedB), the transform
// writes B straight into it (weights_packed in the level files): one pass over w, its
// taps gathered by register transposes, the outputs written down the panels in order,
// no U and no packing. VGG-11's layers, 1 thread: forward 12-15% and input gradient
// 6-16% less time at both levels (bench/RESULTS.md, "After the Winograd weights are
// written packed").
//
// Note [Winograd weight transform as a GEMM]
// Elsewhere (the baseline level, whose sgemm is Eigen's), U = G g G^T is computed as a
// GEMM: it is linear in the 9 taps of g, U[xi] = sum_rs Kw[xi][rs] g[rs] with
// Kw[(a, b)][(r, s)] = G[a][r] G[b][s] (the Kronecker product G (x) G), so the
// transform of all O I kernels is U [points][O I] = Kw w^T, reading w in place; the
// kernel rotated by 180 degrees has Kw[(a, b)][(r, s)] = G[a][2 - r] G[b][2 - s]. It does
// twice the multiplies of the separable (G g) G^T, at GEMM speed. The products
// G[a][r] G[b][s] are rounded to float once; F(2x2)'s are exact. The weight gradient's
// G^T dU G stays separable (weight_grad_tiles) at every level: as the GEMM dU^T Kw,
// with 9 columns, it measured slower.
const std::vector<float>& kron(int64_t m, bool rotated) {
  static const std::vector<float> tables[2][2] = {{make_kron(2, false), make_kron(2, true)},
                                                  {make_kron(4, false), make_kron(4, true)}};
  return tables[m == 4][rotated];
}

// Note [Winograd and non-finite values]
// Winograd adds and subtracts neighbouring inputs (and gradients) before it multiplies,
// so an inf meets another inf (inf - inf) or a zero (0 * inf) that the direct sum,
// which multiplies each input by each weight once, never forms: NaN where PyTorch has
// an inf or a finite value. So forward, input_grad and weight_grad return false when an
// operand holds an inf or a NaN, and conv2d.cpp then computes with im2col. Images and
// gradients are checked as they are staged, on the staged copy while it is in cache
// (stage_planes); the weights as their transform reads them (weights_packed), or by
// all_finite, in parallel. A separate serial pass over the activations took 1-1.5% of
// the VGG-11-BN train step. Finite operands near the float range can still overflow in
// the transforms, where a direct sum would not: that is not checked.
bool all_finite(const float* p, int64_t n) {
  std::atomic<bool> finite{true};
  parallel_for(0, n, int64_t(1) << 16, [&](int64_t b, int64_t e) {
    uint32_t bad = 0;  // a branch-free OR over the exponent test, which vectorises
    for (int64_t i = b; i < e; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, sizeof bits);
      bad |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
    }
    if (bad) finite.store(false);
  });
  return finite.load();
}

// Point xi's GEMM operand B in conv(): the transform of w [O, I, 3, 3] read as [I, O]
// (B = U^T), or, flipped (the input gradient), that of w rotated by 180 degrees read as
// [O, I]. Packed for sgemm_packed where this CPU level has that form (Note [Winograd
// weights packed once]), else U [points][O][I].
struct WeightOperand {
  Tensor buf;
  PackedB packed;  // packed.floats > 0: buf holds packed.floats per point
  bool flipped = false;
  bool finite = true;  // false: w held an inf or a NaN, and buf is not computed
};

WeightOperand transform_weights(const Variant& v, const float* w, int64_t O, int64_t I, bool flipped) {
  WeightOperand op;
  op.flipped = flipped;
  const int64_t K = flipped ? O : I, N = flipped ? I : O;
  op.packed = sgemm_packed_b_layout(K, N);
  if (op.packed.floats == 0) {  // Note [Winograd weight transform as a GEMM]
    op.finite = all_finite(w, O * I * 9);
    if (!op.finite) return op;
    op.buf = empty({v.points * O * I});
    sgemm(false, true, v.points, O * I, 9, 1.0f, kron(v.m, flipped).data(), 9, w, 9, 0.0f, op.buf.data<float>(), O * I);
    return op;
  }
  op.buf = empty({v.points * op.packed.floats});
  float* out = op.buf.data<float>();
  DDL_ASSERT(op.packed.nr % kLanes == 0, "winograd: sgemm panels of ", op.packed.nr, " columns");
  const int64_t L = kLanes, blocks = op.packed.floats / K / L;  // the 16-column blocks of N's panels
  std::atomic<bool> finite{true};
  parallel_for(0, blocks, 1, [&](int64_t jb0, int64_t jb1) {
    thread_local std::vector<float> wt;
    wt.resize(size_t(K * 9 * L));
    if (!v.k->weights_packed(w, O, I, flipped, op.packed.kc, op.packed.nr, op.packed.floats, jb0, jb1, wt.data(), out))
      finite.store(false);
  });
  op.finite = finite.load();
  return op;
}

// y = conv(x, w) + bias (bias [O] or null), with B = transform_weights(w); false (y then
// unspecified) when x held an inf or a NaN. flipped: the kernel applied is a weight
// [g.I, g.O, 3, 3] with its channel dims swapped and rotated 180 degrees, which makes y
// the input gradient of that weight's conv.
bool conv(const Variant& v, const Geom& g, const float* x, const WeightOperand& B, const float* bias, float* y) {
  const Tiling t(g, v.m, kTargetTiles);
  const int64_t pts = v.points;
  const float* b = B.buf.data<float>();
  std::atomic<bool> finite{true};
  auto run = [&](int64_t cb, int64_t ce) {
    ChunkScratch sc(pts, t.nb * t.per_image(), g.I, g.O);
    for (int64_t ci = cb; ci < ce; ++ci) {
      const int64_t n0 = ci * t.nb, nb = std::min(t.nb, g.N - n0), T = nb * t.per_image();
      if (!finite.load()) continue;  // the caller recomputes y without Winograd
      if (!input_transform(v, x, g.I, g.H, g.W, g.ph, g.pw, t, n0, nb, sc.a)) {
        finite.store(false);
        continue;
      }
      // The GEMMs are independent: threads take whole ones (sgemm runs
      // single-threaded inside), which balances better than splitting each.
      parallel_for(0, pts, 1, [&](int64_t xb, int64_t xe) {
        for (int64_t xi = xb; xi < xe; ++xi) {
          const float* vx = sc.a + xi * T * g.I;
          float* m = sc.b + xi * T * g.O;
          if (B.packed.floats > 0)
            sgemm_packed(T, g.O, g.I, vx, g.I, B.packed, b + xi * B.packed.floats, m, g.O);
          else if (B.flipped)
            sgemm(false, false, T, g.O, g.I, 1.0f, vx, g.I, b + xi * g.I * g.O, g.O, 0.0f, m, g.O);
          else
            sgemm(false, true, T, g.O, g.I, 1.0f, vx, g.I, b + xi * g.O * g.I, g.I, 0.0f, m, g.O);
        }
      });
      output_transform(v, sc.b, bias, g.O, g.P, g.Q, t, n0, nb, y);
    }
  };
  if (get_num_threads() > 1 && t.chunks >= get_num_threads()) {
    parallel_for(0, t.chunks, 1, run);
  } else {
    run(0, t.chunks);
  }
  return finite.load();
}

}  // namespace

bool forward(const Geom& g, const float* x, const float* w, const float* bias, float* y) {
  const Variant v = variant(tile_size(g));
  const WeightOperand B = transform_weights(v, w, g.O, g.I, false);
  return B.finite && conv(v, g, x, B, bias, y);
}

bool input_grad(const Geom& g, const float* gy, const float* w, float* gx) {
  const Variant v = variant(tile_size(g));
  // A conv of gy with the flipped kernel, channel dims swapped, padding 2 - pad.
  const Geom gt{g.N, g.O, g.P, g.Q, g.I, g.H, g.W, 2 - g.ph, 2 - g.pw};
  const WeightOperand B = transform_weights(v, w, g.O, g.I, true);
  return B.finite && conv(v, gt, gy, B, nullptr, gx);
}

bool weight_grad(const Geom& g, const float* x, const float* gy, float* gw) {
  const Variant v = variant(tile_size(g));
  const int64_t target = kWeightGradScratchBytes / (v.points * (g.I + g.O) * int64_t(sizeof(float)));
  const Tiling t(g, v.m, std::max(kTargetTiles * 4 / (v.m * v.m), target));
  Tensor dU_buf = empty({v.points * g.O * g.I});
  float* dU = dU_buf.data<float>();
  ChunkScratch sc(v.points, t.nb * t.per_image(), g.I, g.O);
  // Chunks in order, so each dU[xi] sums its tiles in one fixed order.
  for (int64_t ci = 0; ci < t.chunks; ++ci) {
    const int64_t n0 = ci * t.nb, nb = std::min(t.nb, g.N - n0), T = nb * t.per_image();
    if (!input_transform(v, x, g.I, g.H, g.W, g.ph, g.pw, t, n0, nb, sc.a)) return false;
    if (!grad_transform(v, gy, g.O, g.P, g.Q, t, n0, nb, sc.b)) return false;
    parallel_for(0, v.points, 1, [&](int64_t xb, int64_t xe) {
      for (int64_t xi = xb; xi < xe; ++xi)
        sgemm(true, false, g.O, g.I, T, 1.0f, sc.b + xi * T * g.O, g.O, sc.a + xi * T * g.I, g.I, ci == 0 ? 0.0f : 1.0f,
              dU + xi * g.O * g.I, g.I);
    });
  }
  // gw = G^T dU G per (o, i), 16 input channels at a time: separable, so half the
  // multiplies of the GEMM with Kw^T, and measured faster (Note [Winograd weight transform as a GEMM]).
  parallel_for(0, g.O, 4, [&](int64_t ob, int64_t oe) { v.k->weight_grad(dU, g.O, g.I, ob, oe, gw); });
  return true;
}

}  // namespace ddl::cpu::winograd
