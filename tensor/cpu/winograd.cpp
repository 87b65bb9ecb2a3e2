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
// A level without a packed form (the baseline, whose sgemm is Eigen's), or an N wider
// than one packed block, takes the same transform with one K block and one panel of
// padded(N) columns: that layout is op(B) row-major, for sgemm.

// Note [Winograd and non-finite values]
// Winograd adds and subtracts neighbouring inputs (and gradients) before it multiplies,
// so an inf meets another inf (inf - inf) or a zero (0 * inf) that the direct sum,
// which multiplies each input by each weight once, never forms: NaN where PyTorch has
// an inf or a finite value. So forward, input_grad and weight_grad return false when an
// operand holds an inf or a NaN, and conv2d.cpp then computes with im2col. Images and
// gradients are checked as they are staged, on the staged copy while it is in cache
// (stage_planes); the weights as their transform reads them (weights_packed). A
// separate serial pass over the activations took 1-1.5% of
// the VGG-11-BN train step. Finite operands near the float range can still overflow in
// the transforms, where a direct sum would not: that is not checked.

// Point xi's GEMM operand B in conv(): the transform of w [O, I, 3, 3] read as [I, O]
// (B = U^T), or, flipped (the input gradient), that of w rotated by 180 degrees read as
// [O, I]; packed for sgemm_packed, or plain (Note [Winograd weights packed once]).
struct WeightOperand {
  Tensor buf;      // packed.floats per point
  PackedB packed;  // plain: one block, one panel of packed.nr columns, i.e. row-major
  bool plain = false;
  bool finite = true;  // false: w held an inf or a NaN, and buf is not complete
};

WeightOperand transform_weights(const Variant& v, const float* w, int64_t O, int64_t I, bool flipped) {
  WeightOperand op;
  const int64_t K = flipped ? O : I, N = flipped ? I : O;
  op.packed = sgemm_packed_b_layout(K, N);
  if (op.packed.floats == 0) {
    op.plain = true;
    op.packed = {K * padded(N), K, padded(N)};
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
      // The GEMMs are independent: threads take whole ones in turn (sgemm runs
      // single-threaded inside), which balances better than splitting each.
      parallel_for_dynamic(0, pts, 1, [&](int64_t xb, int64_t xe) {
        for (int64_t xi = xb; xi < xe; ++xi) {
          const float* vx = sc.a + xi * T * g.I;
          float* m = sc.b + xi * T * g.O;
          const float* bx = b + xi * B.packed.floats;
          if (B.plain)
            sgemm(false, false, T, g.O, g.I, 1.0f, vx, g.I, bx, B.packed.nr, 0.0f, m, g.O);
          else
            sgemm_packed(T, g.O, g.I, vx, g.I, B.packed, bx, m, g.O);
        }
      });
      output_transform(v, sc.b, bias, g.O, g.P, g.Q, t, n0, nb, y);
    }
  };
  if (get_num_threads() > 1 && t.chunks >= get_num_threads()) {
    // Whole chunks in turn too: with halves fixed in advance the main thread waited for
    // the other at the end (libgomp's spin: 5.5% of its samples, now 1.3%).
    parallel_for_dynamic(0, t.chunks, 1, run);
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
    parallel_for_dynamic(0, v.points, 1, [&](int64_t xb, int64_t xe) {
      for (int64_t xi = xb; xi < xe; ++xi)
        sgemm(true, false, g.O, g.I, T, 1.0f, sc.b + xi * T * g.O, g.O, sc.a + xi * T * g.I, g.I, ci == 0 ? 0.0f : 1.0f,
              dU + xi * g.O * g.I, g.I);
    });
  }
  // gw = G^T dU G per (o, i), 16 input channels at a time (as a GEMM dU^T (G (x) G), with
  // 9 columns and twice the multiplies, it measured slower).
  parallel_for_dynamic(0, g.O, 16, [&](int64_t ob, int64_t oe) { v.k->weight_grad(dU, g.O, g.I, ob, oe, gw); });
  return true;
}

}  // namespace ddl::cpu::winograd
