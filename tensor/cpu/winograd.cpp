// Winograd F(2x2, 3x3) convolutions for float32, vectorised over 16 channels (the
// tile arithmetic per instruction-set level: winograd_tiles.h).
//
// Note [Winograd F(2x2, 3x3)]
// Each 2x2 output tile of a 3x3 stride-1 conv is A^T [(G g G^T) . (B^T d B)] A
// for its 4x4 input patch d, so the channel sums become 16 GEMMs, one per
// transform point xi: M[xi][tile, o] = sum_i V[xi][tile, i] U[xi][o, i], with
// 16 O I multiplies per tile instead of 36 (2.25x fewer FLOPs). The weight
// gradient is the adjoint: dU[xi] = dM[xi]^T V[xi] with dM = A dY A^T, then
// dg = G^T dU G. The input gradient is a conv of dY with the kernel flipped
// and its channel dims swapped; since G J = P G (J reverses 3 entries, P swaps
// entries 0 and 3 of 4), its transform is U[P xi]^T: no second weight
// transform, just a transposed GEMM operand.
// Layouts keep channels innermost (V [16][T][I], M [16][T][O]), so every
// transform works on whole 16-channel vectors: images are first staged, zero
// padded, as [rows][cols][channels] (channels-last). The transforms
// use only additions and halves: float32 error stays ~1e-6 relative.
// Images go in chunks of about kTargetTiles tiles; chunk sizes depend only on
// the shapes and every sum has a fixed order, so results do not depend on the
// thread count (as Note [Conv chunks] in conv2d.cpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/sgemm.h>
#include <ddl/tensor/cpu/winograd.h>
#include <ddl/tensor/cpu/winograd_tiles.h>
#include <ddl/tensor/factory.h>
#include <ddl/tensor/parallel.h>

namespace ddl::cpu::winograd {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kTargetTiles = 256;
// The weight gradient's GEMMs sum over tiles: bigger chunks make longer sums
// and fewer passes over dU, up to this much scratch.
constexpr int64_t kWeightGradScratchBytes = 8 << 20;

struct Tiling {
  int64_t TP, TQ, nb, chunks;
  Tiling(const Geom& g, int64_t target_tiles) {
    TP = (g.P + 1) / 2, TQ = (g.Q + 1) / 2;
    nb = std::clamp<int64_t>(target_tiles / (TP * TQ), 1, g.N);
    chunks = (g.N + nb - 1) / nb;
  }
  int64_t per_image() const { return TP * TQ; }
};

int64_t padded(int64_t channels) { return (channels + kLanes - 1) / kLanes * kLanes; }

// The tile arithmetic compiled for the CPU's level (winograd_tiles.h).
const isa::WinogradTiles& tiles() {
  switch (cpu_level()) {
    case CpuLevel::avx512:
      return isa::winograd_tiles_avx512;
    case CpuLevel::avx2:
      return isa::winograd_tiles_avx2;
    case CpuLevel::baseline:
      break;
  }
  return isa::winograd_tiles_baseline;
}

// planes [C, H, W] -> buf [Hp, Wp, Cp] (channels-last, Cp = padded(C)),
// shifted by (ph, pw) and zero elsewhere (channels past C too).
void stage(const float* planes, int64_t C, int64_t H, int64_t W, int64_t ph, int64_t pw, int64_t Hp, int64_t Wp,
           float* buf) {
  const int64_t Cp = padded(C);
  std::fill(buf, buf + Hp * Wp * Cp, 0.0f);
  const int64_t h_end = std::min(H, Hp - ph), w_end = std::min(W, Wp - pw);
  for (int64_t c = 0; c < C; ++c) {
    const float* plane = planes + c * H * W;
    for (int64_t h = 0; h < h_end; ++h) {
      float* dst = buf + ((h + ph) * Wp + pw) * Cp + c;
      for (int64_t w = 0; w < w_end; ++w) dst[w * Cp] = plane[h * W + w];
    }
  }
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

// V [16][T][C] = B^T d B of every tile of images n0 + [0, nb) of x [N, C, H, W].
// Channel blocks are the innermost loop so each of the 16 planes of V is
// written sequentially.
void input_transform(const float* x, int64_t C, int64_t H, int64_t W, int64_t ph, int64_t pw, const Tiling& t,
                     int64_t n0, int64_t nb, float* V) {
  const int64_t T = nb * t.per_image(), Hp = 2 * t.TP + 2, Wp = 2 * t.TQ + 2, Cp = padded(C);
  const isa::WinogradTiles& k = tiles();
  for_each_image(nb, Hp * Wp * Cp, [&](int64_t n, float* buf) {
    stage(x + (n0 + n) * C * H * W, C, H, W, ph, pw, Hp, Wp, buf);
    k.input(buf, C, Wp, t.TP, t.TQ, n * t.per_image(), T, V);
  });
}

// y images n0 + [0, nb) of [N, O, P, Q] = A^T m A (+ bias) of M [16][T][O].
void output_transform(const float* M, const float* bias, int64_t O, int64_t P, int64_t Q, const Tiling& t, int64_t n0,
                      int64_t nb, float* y) {
  const int64_t T = nb * t.per_image(), Pp = 2 * t.TP, Qp = 2 * t.TQ, Op = padded(O);
  std::vector<float> bias_lanes(Op, 0.0f);
  if (bias) std::copy(bias, bias + O, bias_lanes.begin());
  const isa::WinogradTiles& k = tiles();
  for_each_image(nb, Pp * Qp * Op, [&](int64_t n, float* buf) {
    k.output(M, bias_lanes.data(), O, Qp, t.TP, t.TQ, n * t.per_image(), T, buf);
    for (int64_t o = 0; o < O; ++o) {  // channels-last -> planes, clipping odd P, Q
      float* plane = y + ((n0 + n) * O + o) * P * Q;
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) plane[p * Q + q] = buf[(p * Qp + q) * Op + o];
    }
  });
}

// dM [16][T][O] = A dY A^T of every 2x2 tile of gy images n0 + [0, nb) (zero past P, Q).
void grad_transform(const float* gy, int64_t O, int64_t P, int64_t Q, const Tiling& t, int64_t n0, int64_t nb,
                    float* dM) {
  const int64_t T = nb * t.per_image(), Pp = 2 * t.TP, Qp = 2 * t.TQ, Op = padded(O);
  const isa::WinogradTiles& k = tiles();
  for_each_image(nb, Pp * Qp * Op, [&](int64_t n, float* buf) {
    stage(gy + (n0 + n) * O * P * Q, O, P, Q, 0, 0, Pp, Qp, buf);
    k.grad(buf, O, Qp, t.TP, t.TQ, n * t.per_image(), T, dM);
  });
}

// Scratch for one chunk: two [16][T][channels] arrays, plus one vector of slack
// because the transforms load whole 16-lane vectors at the last channel block.
struct ChunkScratch {
  Tensor buf;
  float* a;
  float* b;
  ChunkScratch(int64_t T, int64_t ca, int64_t cb) {
    buf = empty({16 * T * (ca + cb) + 2 * kLanes});
    a = buf.data<float>();
    b = a + 16 * T * ca + kLanes;
  }
};

}  // namespace

// Note [Winograd and non-finite values]
// Winograd adds and subtracts neighbouring inputs (and gradients) before it multiplies,
// so an inf meets another inf (inf - inf) or a zero (0 * inf) that the direct sum,
// which multiplies each input by each weight once, never forms: NaN where PyTorch has
// an inf or a finite value. Operands holding an inf or NaN therefore take im2col
// (conv2d.cpp decides, with all_finite); the check is one pass over them, small beside
// the 9 K (or 9 C) multiplies per element (measured: 0.9 ms for a [64, 64, 32, 32]
// input whose forward takes 120 ms on one core).
bool all_finite(const float* p, int64_t n) {
  uint32_t bad = 0;  // a branch-free OR over the exponent test, which vectorises
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, p + i, sizeof bits);
    bad |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

void transform_weights(const float* w, int64_t O, int64_t I, float* U) {
  const isa::WinogradTiles& k = tiles();
  parallel_for(0, O, 4, [&](int64_t ob, int64_t oe) { k.weights(w, O, I, ob, oe, U); });
}

void conv(const Geom& g, const float* x, const float* U, bool flipped, const float* bias, float* y) {
  const Tiling t(g, kTargetTiles);
  auto run = [&](int64_t cb, int64_t ce) {
    ChunkScratch sc(t.nb * t.per_image(), g.I, g.O);
    for (int64_t ci = cb; ci < ce; ++ci) {
      const int64_t n0 = ci * t.nb, nb = std::min(t.nb, g.N - n0), T = nb * t.per_image();
      input_transform(x, g.I, g.H, g.W, g.ph, g.pw, t, n0, nb, sc.a);
      // The 16 GEMMs are independent: threads take whole ones (sgemm runs
      // single-threaded inside), which balances better than splitting each.
      parallel_for(0, 16, 1, [&](int64_t xb, int64_t xe) {
        for (int64_t xi = xb; xi < xe; ++xi) {
          const float* v = sc.a + xi * T * g.I;
          float* m = sc.b + xi * T * g.O;
          if (flipped) {  // U[P xi] is [I, O]: the flipped kernel's transform, transposed
            const int64_t a = xi / 4, b = xi % 4, pa = a == 0 ? 3 : a == 3 ? 0 : a, pb = b == 0 ? 3 : b == 3 ? 0 : b;
            sgemm(false, false, T, g.O, g.I, 1.0f, v, g.I, U + (pa * 4 + pb) * g.I * g.O, g.O, 0.0f, m, g.O);
          } else {
            sgemm(false, true, T, g.O, g.I, 1.0f, v, g.I, U + xi * g.O * g.I, g.I, 0.0f, m, g.O);
          }
        }
      });
      output_transform(sc.b, bias, g.O, g.P, g.Q, t, n0, nb, y);
    }
  };
  if (get_num_threads() > 1 && t.chunks >= get_num_threads()) {
    parallel_for(0, t.chunks, 1, run);
  } else {
    run(0, t.chunks);
  }
}

void weight_grad(const Geom& g, const float* x, const float* gy, float* gw) {
  const int64_t target = kWeightGradScratchBytes / (16 * (g.I + g.O) * int64_t(sizeof(float)));
  const Tiling t(g, std::max(kTargetTiles, target));
  Tensor dU_buf = empty({16 * g.O * g.I});
  float* dU = dU_buf.data<float>();
  ChunkScratch sc(t.nb * t.per_image(), g.I, g.O);
  // Chunks in order, so each dU[xi] sums its tiles in one fixed order.
  for (int64_t ci = 0; ci < t.chunks; ++ci) {
    const int64_t n0 = ci * t.nb, nb = std::min(t.nb, g.N - n0), T = nb * t.per_image();
    input_transform(x, g.I, g.H, g.W, g.ph, g.pw, t, n0, nb, sc.a);
    grad_transform(gy, g.O, g.P, g.Q, t, n0, nb, sc.b);
    parallel_for(0, 16, 1, [&](int64_t xb, int64_t xe) {
      for (int64_t xi = xb; xi < xe; ++xi)
        sgemm(true, false, g.O, g.I, T, 1.0f, sc.b + xi * T * g.O, g.O, sc.a + xi * T * g.I, g.I, ci == 0 ? 0.0f : 1.0f,
              dU + xi * g.O * g.I, g.I);
    });
  }
  // gw = G^T dU G per (o, i), 16 input channels at a time.
  const isa::WinogradTiles& k = tiles();
  parallel_for(0, g.O, 4, [&](int64_t ob, int64_t oe) { k.weight_grad(dU, g.O, g.I, ob, oe, gw); });
}

}  // namespace ddl::cpu::winograd
