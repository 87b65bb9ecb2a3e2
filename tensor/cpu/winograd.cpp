// Winograd F(2x2, 3x3) convolutions for float32, vectorised over 16 channels.
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

#include <ddl/tensor/cpu/sgemm.h>
#include <ddl/tensor/cpu/winograd.h>
#include <ddl/tensor/factory.h>
#include <ddl/tensor/parallel.h>

namespace ddl::cpu::winograd {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kTargetTiles = 256;
// The weight gradient's GEMMs sum over tiles: bigger chunks make longer sums
// and fewer passes over dU, up to this much scratch.
constexpr int64_t kWeightGradScratchBytes = 8 << 20;

typedef float v16 __attribute__((vector_size(kLanes * sizeof(float))));

// The helpers have internal linkage, so the vector-argument ABI note (emitted
// when AVX-512 is off, e.g. -Dnative=false) is moot.
#pragma GCC diagnostic ignored "-Wpsabi"

inline v16 load16(const float* p) {
  v16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store16(float* p, const v16& v) { std::memcpy(p, &v, sizeof v); }

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

// Writes lanes [0, n) of v to p.
inline void store_lanes(float* p, const v16& v, int64_t n) {
  if (n == kLanes) {
    store16(p, v);
  } else {
    std::memcpy(p, &v, sizeof(float) * n);
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
  for_each_image(nb, Hp * Wp * Cp, [&](int64_t n, float* buf) {
    stage(x + (n0 + n) * C * H * W, C, H, W, ph, pw, Hp, Wp, buf);
    for (int64_t tp = 0; tp < t.TP; ++tp)
      for (int64_t tq = 0; tq < t.TQ; ++tq) {
        const int64_t tile = (n * t.TP + tp) * t.TQ + tq;
        const float* patch = buf + (2 * tp * Wp + 2 * tq) * Cp;
        for (int64_t c0 = 0; c0 < C; c0 += kLanes) {
          const int64_t cn = std::min(kLanes, C - c0);
          v16 d[4][4];
          for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) d[a][b] = load16(patch + (a * Wp + b) * Cp + c0);
          for (int b = 0; b < 4; ++b) {  // B^T d: rows (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
            const v16 r0 = d[0][b], r1 = d[1][b], r2 = d[2][b], r3 = d[3][b];
            d[0][b] = r0 - r2, d[1][b] = r1 + r2, d[2][b] = r2 - r1, d[3][b] = r1 - r3;
          }
          for (int a = 0; a < 4; ++a) {  // (B^T d) B: the same over columns
            const v16 c0v = d[a][0], c1 = d[a][1], c2 = d[a][2], c3 = d[a][3];
            const v16 v[4] = {c0v - c2, c1 + c2, c2 - c1, c1 - c3};
            for (int b = 0; b < 4; ++b) store_lanes(V + ((a * 4 + b) * T + tile) * C + c0, v[b], cn);
          }
        }
      }
  });
}

// y images n0 + [0, nb) of [N, O, P, Q] = A^T m A (+ bias) of M [16][T][O].
void output_transform(const float* M, const float* bias, int64_t O, int64_t P, int64_t Q, const Tiling& t, int64_t n0,
                      int64_t nb, float* y) {
  const int64_t T = nb * t.per_image(), Pp = 2 * t.TP, Qp = 2 * t.TQ, Op = padded(O);
  std::vector<float> bias_lanes(Op, 0.0f);
  if (bias) std::copy(bias, bias + O, bias_lanes.begin());
  for_each_image(nb, Pp * Qp * Op, [&](int64_t n, float* buf) {
    for (int64_t tp = 0; tp < t.TP; ++tp)
      for (int64_t tq = 0; tq < t.TQ; ++tq) {
        const int64_t tile = (n * t.TP + tp) * t.TQ + tq;
        float* out = buf + (2 * tp * Qp + 2 * tq) * Op;
        for (int64_t o0 = 0; o0 < O; o0 += kLanes) {
          const v16 bv = load16(bias_lanes.data() + o0);
          v16 s[2][4];
          for (int b = 0; b < 4; ++b) {  // A^T m over rows: (m0 + m1 + m2, m1 - m2 - m3)
            const float* m = M + (b * T + tile) * O + o0;
            const v16 m0 = load16(m), m1 = load16(m + 4 * T * O), m2 = load16(m + 8 * T * O),
                      m3 = load16(m + 12 * T * O);
            s[0][b] = m0 + m1 + m2, s[1][b] = m1 - m2 - m3;
          }
          for (int r = 0; r < 2; ++r) {  // then over columns
            const v16 out0 = s[r][0] + s[r][1] + s[r][2] + bv, out1 = s[r][1] - s[r][2] - s[r][3] + bv;
            store16(out + r * Qp * Op + o0, out0);
            store16(out + (r * Qp + 1) * Op + o0, out1);
          }
        }
      }
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
  for_each_image(nb, Pp * Qp * Op, [&](int64_t n, float* buf) {
    stage(gy + (n0 + n) * O * P * Q, O, P, Q, 0, 0, Pp, Qp, buf);
    for (int64_t tp = 0; tp < t.TP; ++tp)
      for (int64_t tq = 0; tq < t.TQ; ++tq) {
        const int64_t tile = (n * t.TP + tp) * t.TQ + tq;
        const float* e = buf + (2 * tp * Qp + 2 * tq) * Op;
        for (int64_t o0 = 0; o0 < O; o0 += kLanes) {
          const int64_t on = std::min(kLanes, O - o0);
          const v16 e00 = load16(e + o0), e01 = load16(e + Op + o0), e10 = load16(e + Qp * Op + o0),
                    e11 = load16(e + (Qp + 1) * Op + o0);
          // A dY over rows: (e0, e0 + e1, e0 - e1, -e1), columns j = 0, 1.
          const v16 r[4][2] = {{e00, e01}, {e00 + e10, e01 + e11}, {e00 - e10, e01 - e11}, {-e10, -e11}};
          for (int a = 0; a < 4; ++a) {  // then A^T over columns
            const v16 v[4] = {r[a][0], r[a][0] + r[a][1], r[a][0] - r[a][1], -r[a][1]};
            for (int b = 0; b < 4; ++b) store_lanes(dM + ((a * 4 + b) * T + tile) * O + o0, v[b], on);
          }
        }
      }
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
  parallel_for(0, O, 4, [&](int64_t ob, int64_t oe) {
    for (int64_t o = ob; o < oe; ++o)
      for (int64_t i0 = 0; i0 < I; i0 += kLanes) {
        const int64_t in = std::min(kLanes, I - i0);
        float lanes[9][kLanes] = {};
        for (int64_t j = 0; j < in; ++j)
          for (int rs = 0; rs < 9; ++rs) lanes[rs][j] = w[(o * I + i0 + j) * 9 + rs];
        v16 g[3][3], t[4][3];
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) g[r][s] = load16(lanes[r * 3 + s]);
        for (int s = 0; s < 3; ++s) {  // t = G g
          t[0][s] = g[0][s];
          t[1][s] = 0.5f * (g[0][s] + g[1][s] + g[2][s]);
          t[2][s] = 0.5f * (g[0][s] - g[1][s] + g[2][s]);
          t[3][s] = g[2][s];
        }
        for (int a = 0; a < 4; ++a) {  // U = t G^T
          const v16 u[4] = {t[a][0], 0.5f * (t[a][0] + t[a][1] + t[a][2]), 0.5f * (t[a][0] - t[a][1] + t[a][2]),
                            t[a][2]};
          for (int b = 0; b < 4; ++b) store_lanes(U + ((a * 4 + b) * O + o) * I + i0, u[b], in);
        }
      }
  });
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
  parallel_for(0, g.O, 4, [&](int64_t ob, int64_t oe) {
    for (int64_t o = ob; o < oe; ++o)
      for (int64_t i0 = 0; i0 < g.I; i0 += kLanes) {
        const int64_t in = std::min(kLanes, g.I - i0);
        v16 u[4][4];
        for (int xi = 0; xi < 16; ++xi) {
          float lanes[kLanes] = {};
          std::copy(dU + (xi * g.O + o) * g.I + i0, dU + (xi * g.O + o) * g.I + i0 + in, lanes);
          u[xi / 4][xi % 4] = load16(lanes);
        }
        v16 q[3][4];
        for (int b = 0; b < 4; ++b) {  // q = G^T dU
          q[0][b] = u[0][b] + 0.5f * (u[1][b] + u[2][b]);
          q[1][b] = 0.5f * (u[1][b] - u[2][b]);
          q[2][b] = 0.5f * (u[1][b] + u[2][b]) + u[3][b];
        }
        float out[9][kLanes];
        for (int r = 0; r < 3; ++r) {  // dg = q G
          const v16 s0 = q[r][0] + 0.5f * (q[r][1] + q[r][2]), s1 = 0.5f * (q[r][1] - q[r][2]),
                    s2 = 0.5f * (q[r][1] + q[r][2]) + q[r][3];
          store16(out[r * 3], s0);
          store16(out[r * 3 + 1], s1);
          store16(out[r * 3 + 2], s2);
        }
        for (int64_t j = 0; j < in; ++j)
          for (int rs = 0; rs < 9; ++rs) gw[(o * g.I + i0 + j) * 9 + rs] = out[rs][j];
      }
  });
}

}  // namespace ddl::cpu::winograd
