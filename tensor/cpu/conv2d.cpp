// CPU conv2d kernels: im2col + GEMM over chunks of images, for float32
// (ddl::cpu::sgemm) and float64 (dgemm, for gradient checks), plus a float32
// Winograd F(2x2, 3x3) path for wide 3x3 stride-1 layers (forward and input
// gradient). 1x1/stride-1/pad-0 convs skip im2col where they can. No direct
// convolution, no blocked (NCHWc) layouts.
//
// Note [Conv chunks]
// One GEMM per image has too few columns for small late-layer maps (P*Q = 4
// at 2x2), so images are processed in chunks of nb: im2col writes the columns
// of nb images side by side, cols[(c, r, s), (n, p, q)], and one GEMM covers
// them. nb depends only on the shapes, so every output element is computed by
// the same instruction sequence for any thread count. With at least as many
// chunks as threads, threads take whole chunks (single-threaded sgemm inside);
// otherwise chunks run one after another with a multi-threaded sgemm.
// The weight gradient sums over chunks: chunks are grouped into a fixed
// (shape-only) number of parts, each part accumulates into its own buffer, and
// parts are added in part order, so the sum is thread-count independent too.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "tensor/conv.h"
#include "tensor/cpu/sgemm.h"
#include "tensor/factory.h"
#include "tensor/parallel.h"

namespace ddl::cpu {
namespace {

// Columns one chunk's GEMM aims for, and the weight-gradient part limits.
constexpr int64_t kTargetCols = 1024;
constexpr int64_t kMaxParts = 4;
constexpr int64_t kMaxPartBytes = 32 << 20;

struct Geom {
  int64_t N, C, H, W, K, R, S, P, Q, G, Cg, Kg, sh, sw, ph, pw, dh, dw;
  int64_t crs() const { return Cg * R * S; }
  int64_t pq() const { return P * Q; }
  int64_t hw() const { return H * W; }
  // cols of one image equal the image itself: no im2col needed.
  bool pointwise() const { return R == 1 && S == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
  // Images per chunk and chunk count; shape-only, see Note [Conv chunks].
  int64_t nb() const { return std::clamp<int64_t>(kTargetCols / std::max<int64_t>(pq(), 1), 1, N); }
  int64_t chunks() const { return (N + nb() - 1) / nb(); }
};

Geom make_geom(const Shape& xs, const Shape& ws, const Shape& ys, const Conv2dParams& p) {
  Geom g{};
  g.N = xs[0], g.C = xs[1], g.H = xs[2], g.W = xs[3];
  g.K = ws[0], g.R = ws[2], g.S = ws[3], g.P = ys[2], g.Q = ys[3];
  g.G = p.groups, g.Cg = g.C / g.G, g.Kg = g.K / g.G;
  g.sh = p.stride[0], g.sw = p.stride[1], g.ph = p.padding[0], g.pw = p.padding[1];
  g.dh = p.dilation[0], g.dw = p.dilation[1];
  return g;
}

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
          int64_t ldb, float beta, float* C, int64_t ldc) {
  sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
}
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B,
          int64_t ldb, double beta, double* C, int64_t ldc) {
  dgemm(ta, tb, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc);
}

// Output columns q whose input column q*sw + off lies in [0, W): [lo, hi).
inline void valid_q(int64_t off, int64_t sw, int64_t W, int64_t Q, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
  hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / sw + 1;
  lo = std::min(lo, Q);
  hi = std::clamp(hi, lo, Q);
}

// x: images n0.. of [N, C, H, W] (pointer to image n0), channels c0 + [0, Cg)
// cols: [Cg*R*S, nb*P*Q], rows [row_b, row_e) written.
template <typename T>
void im2col(const Geom& g, const T* x, int64_t c0, int64_t nb, T* cols, int64_t row_b, int64_t row_e) {
  const int64_t ld = nb * g.pq(), img = g.C * g.hw();
  for (int64_t row = row_b; row < row_e; ++row) {
    const int64_t c = row / (g.R * g.S), r = row / g.S % g.R, s = row % g.S;
    const int64_t off = s * g.dw - g.pw;
    int64_t lo, hi;
    valid_q(off, g.sw, g.W, g.Q, lo, hi);
    for (int64_t n = 0; n < nb; ++n) {
      const T* plane = x + n * img + (c0 + c) * g.hw();
      T* d = cols + row * ld + n * g.pq();
      for (int64_t p = 0; p < g.P; ++p, d += g.Q) {
        const int64_t ih = p * g.sh - g.ph + r * g.dh;
        if (ih < 0 || ih >= g.H) {
          std::fill(d, d + g.Q, T(0));
          continue;
        }
        const T* src = plane + ih * g.W + off;
        std::fill(d, d + lo, T(0));
        if (g.sw == 1) {
          std::memcpy(d + lo, src + lo, sizeof(T) * (hi - lo));
        } else {
          for (int64_t q = lo; q < hi; ++q) d[q] = src[q * g.sw];
        }
        std::fill(d + hi, d + g.Q, T(0));
      }
    }
  }
}

// The adjoint of im2col: gx planes c0 + [c_b, c_e) of images n0.. are
// overwritten with the sum of their cols entries, in fixed (r, s, p, q) order.
template <typename T>
void col2im(const Geom& g, const T* cols, int64_t nb, T* gx, int64_t c0, int64_t c_b, int64_t c_e) {
  const int64_t ld = nb * g.pq(), img = g.C * g.hw();
  for (int64_t c = c_b; c < c_e; ++c) {
    for (int64_t n = 0; n < nb; ++n) {
      T* plane = gx + n * img + (c0 + c) * g.hw();
      std::fill(plane, plane + g.hw(), T(0));
      for (int64_t r = 0; r < g.R; ++r) {
        for (int64_t s = 0; s < g.S; ++s) {
          const int64_t off = s * g.dw - g.pw;
          int64_t lo, hi;
          valid_q(off, g.sw, g.W, g.Q, lo, hi);
          const T* src = cols + ((c * g.R + r) * g.S + s) * ld + n * g.pq();
          for (int64_t p = 0; p < g.P; ++p, src += g.Q) {
            const int64_t ih = p * g.sh - g.ph + r * g.dh;
            if (ih < 0 || ih >= g.H) continue;
            T* dst = plane + ih * g.W + off;
            if (g.sw == 1) {
              for (int64_t q = lo; q < hi; ++q) dst[q] += src[q];
            } else {
              for (int64_t q = lo; q < hi; ++q) dst[q * g.sw] += src[q];
            }
          }
        }
      }
    }
  }
}

// Scratch for one chunk: cols [crs, nb*PQ] and tmp [Kg, nb*PQ].
template <typename T>
struct Scratch {
  Tensor buf;
  T* cols;
  T* tmp;
  explicit Scratch(const Geom& g) {
    const int64_t n = g.nb() * g.pq();
    buf = empty({(g.crs() + g.Kg) * n}, dtype_of<T>);
    cols = buf.data<T>();
    tmp = cols + g.crs() * n;
  }
};

// Runs chunk(index, scratch) for every chunk; see Note [Conv chunks].
template <typename T, typename Fn>
void for_each_chunk(const Geom& g, const Fn& chunk) {
  const int64_t nchunks = g.chunks();
  if (get_num_threads() > 1 && nchunks >= get_num_threads()) {
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      Scratch<T> sc(g);
      for (int64_t i = b; i < e; ++i) chunk(i, sc);
    });
  } else {
    Scratch<T> sc(g);
    for (int64_t i = 0; i < nchunks; ++i) chunk(i, sc);
  }
}

// Note [Winograd F(2x2, 3x3)]
// 3x3 stride-1 convolutions (VGG's all) use Winograd's minimal filtering:
// each 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A for the 4x4 input
// patch d, so the channel sums become 16 GEMMs U[xi][O, I] x V[xi][I, tiles]
// with 16 K C multiplies per tile instead of 36: 2.25x fewer FLOPs. The
// transforms use only additions and halves, so float32 error stays ~1e-6
// relative. The input gradient of such a conv is again one (with the kernel
// flipped and its channel dims swapped, padding 2 - pad), so it takes the
// same path; the weight gradient stays on im2col. See winograd_ok for when.
// Tiles are chunked like images in Note [Conv chunks], so results do not
// depend on the thread count.
constexpr int64_t kTargetTiles = 512;

struct WinoGeom {
  int64_t N, I, H, W, O, P, Q, ph, pw;  // input [N, I, H, W] -> output [N, O, P, Q]
  int64_t tp() const { return (P + 1) / 2; }
  int64_t tq() const { return (Q + 1) / 2; }
  int64_t nb() const { return std::clamp<int64_t>(kTargetTiles / (tp() * tq()), 1, N); }
  int64_t chunks() const { return (N + nb() - 1) / nb(); }
  int64_t tiles() const { return nb() * tp() * tq(); }
};

// Where Winograd beats im2col here: its transforms cost O(tiles * channels),
// worth it only with many channels and at least 4 tiles per image (measured).
bool winograd_ok(const Geom& g) {
  return g.R == 3 && g.S == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 && g.G == 1 && g.ph <= 2 &&
         g.pw <= 2 && g.C >= 128 && g.K >= 128 && g.P * g.Q >= 16 && g.H * g.W >= 16;
}

// U: [16, O, I] = G g G^T of w [K, C, 3, 3]; flip: g = w[i][o] rotated 180
// degrees (the input gradient's kernel), so O = C and I = K.
void winograd_weights(const float* w, int64_t K, int64_t C, bool flip, float* U) {
  const int64_t O = flip ? C : K, I = flip ? K : C;
  parallel_for(0, O, 4, [&](int64_t ob, int64_t oe) {
    for (int64_t o = ob; o < oe; ++o)
      for (int64_t i = 0; i < I; ++i) {
        float g[3][3], t[4][3];
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) g[r][s] = flip ? w[(i * C + o) * 9 + (2 - r) * 3 + (2 - s)] : w[(o * C + i) * 9 + r * 3 + s];
        for (int s = 0; s < 3; ++s) {  // t = G g
          t[0][s] = g[0][s];
          t[1][s] = 0.5f * (g[0][s] + g[1][s] + g[2][s]);
          t[2][s] = 0.5f * (g[0][s] - g[1][s] + g[2][s]);
          t[3][s] = g[2][s];
        }
        for (int a = 0; a < 4; ++a) {  // U = t G^T
          const float u[4] = {t[a][0], 0.5f * (t[a][0] + t[a][1] + t[a][2]), 0.5f * (t[a][0] - t[a][1] + t[a][2]), t[a][2]};
          for (int b = 0; b < 4; ++b) U[((a * 4 + b) * O + o) * I + i] = u[b];
        }
      }
  });
}

// One chunk: images n0 + [0, nb) of x [N, I, H, W] -> y [N, O, P, Q].
// V: [16, I, tiles], M: [16, O, tiles], tile t = (n * TP + tp) * TQ + tq.
void winograd_chunk(const WinoGeom& g, const float* x, const float* U, const float* bias, float* y, int64_t n0,
                    int64_t nb, float* V, float* M) {
  const int64_t TP = g.tp(), TQ = g.tq(), T = nb * TP * TQ, rw = 2 * TQ + 2, e = TQ + 1;
  const int64_t xs = g.I * T, ms = g.O * T;  // stride between the 16 transform planes
  // Input transform, vectorised along tq: padded rows are split into even and
  // odd columns so every loop below is unit-stride.
  parallel_for(0, g.I, 4, [&](int64_t ib, int64_t ie) {
    std::vector<float> buf(rw + 16 * e);
    float* row = buf.data();
    float* eo = row + rw;  // [4 rows][even, odd][e], then B^T applied in place
    const int64_t lo = std::min<int64_t>(g.pw, rw), hi = std::clamp<int64_t>(g.W + g.pw, lo, rw);
    for (int64_t i = ib; i < ie; ++i)
      for (int64_t n = 0; n < nb; ++n)
        for (int64_t tp = 0; tp < TP; ++tp) {
          for (int a = 0; a < 4; ++a) {
            float* ev = eo + a * 2 * e;
            float* od = ev + e;
            const int64_t ih = 2 * tp - g.ph + a;
            if (ih < 0 || ih >= g.H) {
              std::fill(ev, ev + 2 * e, 0.0f);
              continue;
            }
            const float* src = x + (((n0 + n) * g.I + i) * g.H + ih) * g.W;
            std::fill(row, row + lo, 0.0f);
            std::memcpy(row + lo, src + lo - g.pw, sizeof(float) * (hi - lo));
            std::fill(row + hi, row + rw, 0.0f);
            for (int64_t k = 0; k < e; ++k) ev[k] = row[2 * k], od[k] = row[2 * k + 1];
          }
          // B^T d over rows: (r0 - r2, r1 + r2, r2 - r1, r1 - r3), even and odd halves alike.
          float *d0 = eo, *d1 = eo + 2 * e, *d2 = eo + 4 * e, *d3 = eo + 6 * e;
          for (int64_t k = 0; k < 2 * e; ++k) {
            const float a0 = d0[k], a1 = d1[k], a2 = d2[k], a3 = d3[k];
            d0[k] = a0 - a2, d1[k] = a1 + a2, d2[k] = a2 - a1, d3[k] = a1 - a3;
          }
          // (B^T d) B over columns: column 2tq + b is ev[tq], od[tq], ev[tq + 1], od[tq + 1].
          float* v = V + i * T + (n * TP + tp) * TQ;
          for (int a = 0; a < 4; ++a) {
            const float* ev = eo + a * 2 * e;
            const float* od = ev + e;
            float *v0 = v + 4 * a * xs, *v1 = v0 + xs, *v2 = v1 + xs, *v3 = v2 + xs;
            for (int64_t tq = 0; tq < TQ; ++tq) {
              v0[tq] = ev[tq] - ev[tq + 1];
              v1[tq] = od[tq] + ev[tq + 1];
              v2[tq] = ev[tq + 1] - od[tq];
              v3[tq] = od[tq] - od[tq + 1];
            }
          }
        }
  });
  for (int xi = 0; xi < 16; ++xi)
    sgemm(false, false, g.O, T, g.I, 1.0f, U + xi * g.O * g.I, g.I, V + xi * xs, T, 0.0f, M + xi * ms, T);
  // Output transform, vectorised along tq; rows go through a buffer so odd P, Q clip cleanly.
  parallel_for(0, g.O, 4, [&](int64_t ob, int64_t oe) {
    std::vector<float> buf(8 * TQ + 4 * TQ);
    float* s = buf.data();       // A^T m: [2 rows][4 cols][TQ]
    float* out = s + 8 * TQ;     // [2 rows][2 TQ]
    for (int64_t o = ob; o < oe; ++o) {
      const float bv = bias ? bias[o] : 0.0f;
      for (int64_t n = 0; n < nb; ++n)
        for (int64_t tp = 0; tp < TP; ++tp) {
          const float* m = M + o * T + (n * TP + tp) * TQ;
          for (int b = 0; b < 4; ++b) {
            const float *m0 = m + b * ms, *m1 = m0 + 4 * ms, *m2 = m1 + 4 * ms, *m3 = m2 + 4 * ms;
            float *s0 = s + b * TQ, *s1 = s + (4 + b) * TQ;
            for (int64_t tq = 0; tq < TQ; ++tq) s0[tq] = m0[tq] + m1[tq] + m2[tq], s1[tq] = m1[tq] - m2[tq] - m3[tq];
          }
          for (int r = 0; r < 2; ++r) {
            const float *c0 = s + 4 * r * TQ, *c1 = c0 + TQ, *c2 = c1 + TQ, *c3 = c2 + TQ;
            float* o_row = out + r * 2 * TQ;
            for (int64_t tq = 0; tq < TQ; ++tq) {
              o_row[2 * tq] = c0[tq] + c1[tq] + c2[tq] + bv;
              o_row[2 * tq + 1] = c1[tq] - c2[tq] - c3[tq] + bv;
            }
          }
          float* y0 = y + (((n0 + n) * g.O + o) * g.P + 2 * tp) * g.Q;
          std::memcpy(y0, out, sizeof(float) * g.Q);
          if (2 * tp + 1 < g.P) std::memcpy(y0 + g.Q, out + 2 * TQ, sizeof(float) * g.Q);
        }
    }
  });
}

// y = conv(x, kernel transformed into U), see Note [Winograd F(2x2, 3x3)].
void winograd_conv(const WinoGeom& g, const float* x, const float* U, const float* bias, float* y) {
  const int64_t T = g.tiles();
  auto run = [&](int64_t cb, int64_t ce) {
    Tensor buf = empty({16 * (g.I + g.O) * T});
    float* V = buf.data<float>();
    for (int64_t ci = cb; ci < ce; ++ci) {
      const int64_t n0 = ci * g.nb();
      winograd_chunk(g, x, U, bias, y, n0, std::min(g.nb(), g.N - n0), V, V + 16 * g.I * T);
    }
  };
  if (get_num_threads() > 1 && g.chunks() >= get_num_threads()) parallel_for(0, g.chunks(), 1, run);
  else run(0, g.chunks());
}

// x: [N, C, H, W], w: [K, C/G, R, S], bias: [K] or null, y: [N, K, P, Q]
template <typename T>
void forward(const Geom& g, const T* x, const T* w, const T* bias, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    if (winograd_ok(g)) {
      Tensor U = empty({16 * g.K * g.C});
      winograd_weights(w, g.K, g.C, false, U.data<float>());
      winograd_conv({g.N, g.C, g.H, g.W, g.K, g.P, g.Q, g.ph, g.pw}, x, U.data<float>(), bias, y);
      return;
    }
  }
  const int64_t pq = g.pq(), crs = g.crs(), img = g.C * g.hw();
  for_each_chunk<T>(g, [&](int64_t ci, Scratch<T>& sc) {
    const int64_t n0 = ci * g.nb(), nb = std::min(g.nb(), g.N - n0);
    for (int64_t grp = 0; grp < g.G; ++grp) {
      const T* B = sc.cols;
      int64_t ldb = nb * pq;
      if (g.pointwise() && nb == 1) {
        B = x + n0 * img + grp * g.Cg * g.hw();
      } else {
        parallel_for(0, crs, 16, [&](int64_t b, int64_t e) { im2col(g, x + n0 * img, grp * g.Cg, nb, sc.cols, b, e); });
      }
      T* y0 = y + (n0 * g.K + grp * g.Kg) * pq;
      const bool direct = nb == 1;  // the GEMM output is already y's layout
      gemm(false, false, g.Kg, nb * pq, crs, w + grp * g.Kg * crs, crs, B, ldb, T(0), direct ? y0 : sc.tmp,
           direct ? pq : nb * pq);
      if (direct && !bias) continue;
      // tmp [Kg, nb, PQ] -> y [nb, K, PQ] (+ bias)
      parallel_for(0, g.Kg, 8, [&](int64_t kb, int64_t ke) {
        for (int64_t k = kb; k < ke; ++k) {
          const T bv = bias ? bias[grp * g.Kg + k] : T(0);
          for (int64_t n = 0; n < nb; ++n) {
            T* dst = y0 + (n * g.K + k) * pq;
            const T* src = direct ? dst : sc.tmp + (k * nb + n) * pq;
            for (int64_t i = 0; i < pq; ++i) dst[i] = src[i] + bv;
          }
        }
      });
    }
  });
}

// gy [nb, K, PQ] (group grp's Kg channels) -> tmp [Kg, nb, PQ]; returns the
// pointer and leading dimension to read dY of the chunk as [Kg, nb*PQ].
template <typename T>
const T* gather_dy(const Geom& g, const T* gy0, int64_t nb, T* tmp) {
  const int64_t pq = g.pq();
  if (nb == 1) return gy0;
  parallel_for(0, g.Kg, 8, [&](int64_t kb, int64_t ke) {
    for (int64_t k = kb; k < ke; ++k)
      for (int64_t n = 0; n < nb; ++n)
        std::memcpy(tmp + (k * nb + n) * pq, gy0 + (n * g.K + k) * pq, sizeof(T) * pq);
  });
  return tmp;
}

// gy: [N, K, P, Q], w: [K, C/G, R, S], gx: [N, C, H, W]
template <typename T>
void backward_input(const Geom& g, const T* gy, const T* w, T* gx) {
  if constexpr (std::is_same_v<T, float>) {
    if (winograd_ok(g)) {  // a conv of gy with the flipped kernel, padding 2 - pad
      Tensor U = empty({16 * g.K * g.C});
      winograd_weights(w, g.K, g.C, true, U.data<float>());
      winograd_conv({g.N, g.K, g.P, g.Q, g.C, g.H, g.W, 2 - g.ph, 2 - g.pw}, gy, U.data<float>(), nullptr, gx);
      return;
    }
  }
  const int64_t pq = g.pq(), crs = g.crs(), img = g.C * g.hw();
  for_each_chunk<T>(g, [&](int64_t ci, Scratch<T>& sc) {
    const int64_t n0 = ci * g.nb(), nb = std::min(g.nb(), g.N - n0);
    for (int64_t grp = 0; grp < g.G; ++grp) {
      const T* dy = gather_dy(g, gy + (n0 * g.K + grp * g.Kg) * pq, nb, sc.tmp);
      T* gx0 = gx + n0 * img + grp * g.Cg * g.hw();
      if (g.pointwise() && nb == 1) {  // cols == gx of this image
        gemm(true, false, crs, pq, g.Kg, w + grp * g.Kg * crs, crs, dy, pq, T(0), gx0, pq);
        continue;
      }
      // cols [crs, nb*PQ] = W_g^T [crs, Kg] x dY [Kg, nb*PQ]
      gemm(true, false, crs, nb * pq, g.Kg, w + grp * g.Kg * crs, crs, dy, nb * pq, T(0), sc.cols, nb * pq);
      parallel_for(0, g.Cg, 1, [&](int64_t cb, int64_t ce) {
        col2im(g, sc.cols, nb, gx + n0 * img, grp * g.Cg, cb, ce);
      });
    }
  });
}

// gy: [N, K, P, Q], x: [N, C, H, W], gw: [K, C/G, R, S] (= sum over chunks of dY x cols^T)
template <typename T>
void backward_weight(const Geom& g, const T* gy, const T* x, T* gw) {
  const int64_t pq = g.pq(), crs = g.crs(), img = g.C * g.hw(), wsize = g.K * crs;
  const int64_t nchunks = g.chunks();
  int64_t nparts = std::min(nchunks, kMaxParts);
  while (nparts > 1 && nparts * wsize * int64_t(sizeof(T)) > kMaxPartBytes) --nparts;
  // dst [K, crs] (+)= the chunks [cb, ce)
  auto run_part = [&](int64_t cb, int64_t ce, T* dst, Scratch<T>& sc) {
    for (int64_t ci = cb; ci < ce; ++ci) {
      const int64_t n0 = ci * g.nb(), nb = std::min(g.nb(), g.N - n0);
      for (int64_t grp = 0; grp < g.G; ++grp) {
        const T* dy = gather_dy(g, gy + (n0 * g.K + grp * g.Kg) * pq, nb, sc.tmp);
        const T* B = sc.cols;
        if (g.pointwise() && nb == 1) {
          B = x + n0 * img + grp * g.Cg * g.hw();
        } else {
          parallel_for(0, crs, 16, [&](int64_t b, int64_t e) { im2col(g, x + n0 * img, grp * g.Cg, nb, sc.cols, b, e); });
        }
        gemm(false, true, g.Kg, crs, nb * pq, dy, nb * pq, B, nb * pq, ci == cb ? T(0) : T(1),
             dst + grp * g.Kg * crs, crs);
      }
    }
  };
  auto part_range = [&](int64_t part, int64_t& cb, int64_t& ce) {
    cb = part * nchunks / nparts;
    ce = (part + 1) * nchunks / nparts;
  };
  if (nparts == 1) {
    Scratch<T> sc(g);
    run_part(0, nchunks, gw, sc);
    return;
  }
  Tensor partial = empty({nparts, wsize}, dtype_of<T>);
  T* parts = partial.data<T>();
  parallel_for(0, nparts, 1, [&](int64_t b, int64_t e) {
    Scratch<T> sc(g);
    for (int64_t part = b; part < e; ++part) {
      int64_t cb, ce;
      part_range(part, cb, ce);
      run_part(cb, ce, parts + part * wsize, sc);
    }
  });
  parallel_for(0, wsize, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T acc = parts[i];
      for (int64_t part = 1; part < nparts; ++part) acc += parts[part * wsize + i];
      gw[i] = acc;
    }
  });
}

void conv2d_forward_cpu(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                        const Conv2dParams& p) {
  const Geom g = make_geom(x.shape(), w.shape(), y.shape(), p);
  DDL_DISPATCH_FLOAT(x.dtype(), "conv2d", [&] {
    forward<scalar_t>(g, x.data<scalar_t>(), w.data<scalar_t>(), bias.defined() ? bias.data<scalar_t>() : nullptr,
                      y.data<scalar_t>());
  });
}

void conv2d_backward_input_cpu(const Tensor& gy, const Tensor& w, const Tensor& gx, const Conv2dParams& p) {
  const Geom g = make_geom(gx.shape(), w.shape(), gy.shape(), p);
  DDL_DISPATCH_FLOAT(gy.dtype(), "conv2d_backward_input", [&] {
    backward_input<scalar_t>(g, gy.data<scalar_t>(), w.data<scalar_t>(), gx.data<scalar_t>());
  });
}

void conv2d_backward_weight_cpu(const Tensor& gy, const Tensor& x, const Tensor& gw, const Conv2dParams& p) {
  const Geom g = make_geom(x.shape(), gw.shape(), gy.shape(), p);
  DDL_DISPATCH_FLOAT(gy.dtype(), "conv2d_backward_weight", [&] {
    backward_weight<scalar_t>(g, gy.data<scalar_t>(), x.data<scalar_t>(), gw.data<scalar_t>());
  });
}

using kernels::conv2d_backward_input_kernel;
using kernels::conv2d_backward_weight_kernel;
using kernels::conv2d_forward_kernel;
DDL_REGISTER_KERNEL(conv2d_forward_kernel, CPU, &conv2d_forward_cpu);
DDL_REGISTER_KERNEL(conv2d_backward_input_kernel, CPU, &conv2d_backward_input_cpu);
DDL_REGISTER_KERNEL(conv2d_backward_weight_kernel, CPU, &conv2d_backward_weight_cpu);

}  // namespace

}  // namespace ddl::cpu
