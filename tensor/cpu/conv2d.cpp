// CPU conv2d kernels: im2col + GEMM over chunks of images, for float32
// (ddl::cpu::sgemm), float64 (dgemm, for gradient checks) and integers (plain
// loops), plus float32 Winograd F(2x2, 3x3) and F(4x4, 3x3) (winograd.cpp) for wide 3x3
// stride-1 layers with finite operands. 1x1/stride-1/pad-0 convs skip im2col
// where they can.
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

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/sgemm.h>
#include <ddl/tensor/cpu/winograd.h>
#include <ddl/tensor/kernels/functors.h>
#include <ddl/tensor/ops/conv.h>

namespace ddl::cpu {
namespace {

// Columns one chunk's GEMM aims for, and the weight-gradient part limits.
constexpr int64_t kTargetCols = 1024;
constexpr int64_t kMaxParts = 4;
constexpr int64_t kMaxPartBytes = 32 << 20;
constexpr int64_t kWinogradMinChannels = 64;

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

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
          float beta, float* C, int64_t ldc) {
  sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
}
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const double* A, int64_t lda, const double* B, int64_t ldb,
          double beta, double* C, int64_t ldc) {
  dgemm(ta, tb, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc);
}

// Integer convolutions (PyTorch computes them on the CPU too) are rare: plain loops, in
// an unsigned type (WrapU, functors.h) so that products and sums wrap modulo 2^bits as PyTorch's do.
template <typename T>
requires std::is_integral_v<T>
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T beta,
          T* C, int64_t ldc) {
  using U = WrapU<T>;
  std::vector<U> row(N);
  for (int64_t i = 0; i < M; ++i) {
    std::fill(row.begin(), row.end(), U(0));
    for (int64_t k = 0; k < K; ++k) {
      const U a = U(ta ? A[k * lda + i] : A[i * lda + k]);
      if (a == 0) continue;
      for (int64_t j = 0; j < N; ++j) row[j] += U(a * U(tb ? B[j * ldb + k] : B[k * ldb + j]));
    }
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = T(beta == T(0) ? row[j] : U(row[j] + U(C[i * ldc + j])));
  }
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

// Where Winograd (tensor/cpu/winograd.cpp; F(2x2) or F(4x4): winograd::tile_size)
// replaces im2col: 3x3, stride 1, no dilation or groups, with enough channels that
// its O(tiles * channels) transforms are small beside the GEMMs (measured).
bool winograd_ok(const Geom& g) {
  return winograd::mode() != winograd::Mode::off && g.R == 3 && g.S == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
         g.dw == 1 && g.G == 1 && g.ph <= 2 && g.pw <= 2 && g.C >= kWinogradMinChannels && g.K >= kWinogradMinChannels;
}

// x: [N, C, H, W], w: [K, C/G, R, S], bias: [K] or null, y: [N, K, P, Q]
template <typename T>
void forward(const Geom& g, const T* x, const T* w, const T* bias, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    // See Note [Winograd and non-finite values] in winograd.cpp
    if (winograd_ok(g) && winograd::forward({g.N, g.C, g.H, g.W, g.K, g.P, g.Q, g.ph, g.pw}, x, w, bias, y)) return;
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
      for (int64_t n = 0; n < nb; ++n) std::memcpy(tmp + (k * nb + n) * pq, gy0 + (n * g.K + k) * pq, sizeof(T) * pq);
  });
  return tmp;
}

// gy: [N, K, P, Q], w: [K, C/G, R, S], gx: [N, C, H, W]
template <typename T>
void backward_input(const Geom& g, const T* gy, const T* w, T* gx) {
  if constexpr (std::is_same_v<T, float>) {
    // See Note [Winograd and non-finite values] in winograd.cpp
    if (winograd_ok(g) && winograd::input_grad({g.N, g.C, g.H, g.W, g.K, g.P, g.Q, g.ph, g.pw}, gy, w, gx)) return;
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
      parallel_for(0, g.Cg, 1,
                   [&](int64_t cb, int64_t ce) { col2im(g, sc.cols, nb, gx + n0 * img, grp * g.Cg, cb, ce); });
    }
  });
}

// gy: [N, K, P, Q], x: [N, C, H, W], gw: [K, C/G, R, S] (= sum over chunks of dY x cols^T)
template <typename T>
void backward_weight(const Geom& g, const T* gy, const T* x, T* gw) {
  if constexpr (std::is_same_v<T, float>) {
    // See Note [Winograd and non-finite values] in winograd.cpp
    if (winograd_ok(g) && winograd::weight_grad({g.N, g.C, g.H, g.W, g.K, g.P, g.Q, g.ph, g.pw}, x, gy, gw)) return;
  }
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
          parallel_for(0, crs, 16,
                       [&](int64_t b, int64_t e) { im2col(g, x + n0 * img, grp * g.Cg, nb, sc.cols, b, e); });
        }
        gemm(false, true, g.Kg, crs, nb * pq, dy, nb * pq, B, nb * pq, ci == cb ? T(0) : T(1), dst + grp * g.Kg * crs,
             crs);
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

void conv2d_forward_cpu(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y, const Conv2dParams& p) {
  if (is_reduced_float(x.dtype())) {  // See Note [Half compute]: float32 kernel, the result rounded once.
    const Tensor y32 = empty(y.shape(), TensorOptions(DType::Float32, y.device()));
    conv2d_forward_cpu(x.to(DType::Float32), w.to(DType::Float32), bias.defined() ? bias.to(DType::Float32) : bias, y32,
                       p);
    y.copy_(y32);
    return;
  }
  const Geom g = make_geom(x.shape(), w.shape(), y.shape(), p);
  DDL_DISPATCH_NUMERIC(x.dtype(), "conv2d", [&] {
    forward<scalar_t>(g, x.data<scalar_t>(), w.data<scalar_t>(), bias.defined() ? bias.data<scalar_t>() : nullptr,
                      y.data<scalar_t>());
  });
}

void conv2d_backward_input_cpu(const Tensor& gy, const Tensor& w, const Tensor& gx, const Conv2dParams& p) {
  if (is_reduced_float(gy.dtype())) {  // See Note [Half compute]
    const Tensor gx32 = empty(gx.shape(), TensorOptions(DType::Float32, gx.device()));
    conv2d_backward_input_cpu(gy.to(DType::Float32), w.to(DType::Float32), gx32, p);
    gx.copy_(gx32);
    return;
  }
  const Geom g = make_geom(gx.shape(), w.shape(), gy.shape(), p);
  DDL_DISPATCH_NUMERIC(gy.dtype(), "conv2d_backward_input", [&] {
    backward_input<scalar_t>(g, gy.data<scalar_t>(), w.data<scalar_t>(), gx.data<scalar_t>());
  });
}

void conv2d_backward_weight_cpu(const Tensor& gy, const Tensor& x, const Tensor& gw, const Conv2dParams& p) {
  if (is_reduced_float(gy.dtype())) {  // See Note [Half compute]
    const Tensor gw32 = empty(gw.shape(), TensorOptions(DType::Float32, gw.device()));
    conv2d_backward_weight_cpu(gy.to(DType::Float32), x.to(DType::Float32), gw32, p);
    gw.copy_(gw32);
    return;
  }
  const Geom g = make_geom(x.shape(), gw.shape(), gy.shape(), p);
  DDL_DISPATCH_NUMERIC(gy.dtype(), "conv2d_backward_weight", [&] {
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
