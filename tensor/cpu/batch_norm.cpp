// CPU batch_norm kernels: threads split the channels into fixed blocks; each
// channel is reduced by one thread in a fixed order, so results are bitwise the
// same for any thread count. Forward: two-pass mean / centred variance, then y;
// backward: one reduction pass (Σdy, Σdy·(x−μ)), then dx. A 16-bit x runs the
// float32 kernel on a widened copy (its [C] tensors are float32 already).
// The same kernels, instantiated with Relu, are batch norm + ReLU fused (Note
// [Batch norm + ReLU]).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <ddl/tensor/core/dtype.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/ops/norm.h>
#include <ddl/tensor/ops/norm_relu.h>

namespace ddl::cpu {
namespace {

// Note [Batch norm passes]
// x [N, C, S] is processed in blocks of channels [c0, c1) holding about kSlab
// elements per sample; for each n a block is one contiguous slab of
// L = (c1 − c0)·S elements. Block boundaries depend only on S, never on threads.
// Statistics: with long rows (S >= kLongRow) a channel's values are taken in runs
// of at most kRun elements (a long row cut, shorter rows of consecutive samples
// grouped) summed in scalar_t SIMD lanes, and run totals are added in double;
// with short rows (S = 1 after a linear layer, 2×2 maps) each slab position
// accumulates over n in double, then positions are added per channel. The
// forward reads a block three times (sum, centred squares, normalise) and the
// backward twice; a block (e.g. 64 × 1024 floats = 256 KiB) stays in L2 after
// the first read, so DRAM traffic is close to one pass.
constexpr int64_t kSlab = 1024;
constexpr int64_t kLongRow = 64;
constexpr int64_t kRun = 1024;
// Minimum elements per parallel task, so small tensors stay on one thread.
constexpr int64_t kGrainElems = 16384;

// 64-byte SIMD vectors (GCC/Clang vector extensions): one AVX-512 register, or
// two AVX2 ones. Plain lane arrays led GCC to vectorise the wrong loop.
// The helpers have internal linkage, so the vector-argument ABI note is moot.
#pragma GCC diagnostic ignored "-Wpsabi"
template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(64)));
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
constexpr int64_t kWidth = 64 / sizeof(T);

template <typename T>
Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
T lane_sum(const Vec<T>& v) {
  T s = 0;
  for (int64_t j = 0; j < kWidth<T>; ++j) s += v[j];
  return s;
}

// Sums in two vectors of scalar_t lanes plus a scalar for the ends of rows shorter
// than the vectors, emptied into a double once per run (Note [Batch norm passes]).
template <typename T>
struct Lanes {
  Vec<T> a0 = {}, a1 = {};
  T rest = 0;
  double take() {
    const double s = static_cast<double>(lane_sum<T>(a0 + a1) + rest);
    *this = Lanes();
    return s;
  }
};

// acc += Σ (x[i] − shift), i < n. A shift near the values (the channel's first) keeps
// the scalar_t partial sums small: summed as they are, 80 values near 1000 lose
// 1e-4 of their mean in float32 (Chan, Golub, LeVeque 1983, "shifted data").
template <typename T>
void run_sum(const T* x, int64_t n, T shift, Lanes<T>& acc) {
  constexpr int64_t W = kWidth<T>;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    acc.a0 += load(x + i) - shift;
    acc.a1 += load(x + i + W) - shift;
  }
  for (; i < n; ++i) acc.rest += x[i] - shift;
}

// acc += Σ (x[i] − m)², i < n.
template <typename T>
void run_sq_dev(const T* x, int64_t n, T m, Lanes<T>& acc) {
  constexpr int64_t W = kWidth<T>;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec<T> d0 = load(x + i) - m, d1 = load(x + i + W) - m;
    acc.a0 += d0 * d0;
    acc.a1 += d1 * d1;
  }
  for (; i < n; ++i) acc.rest += (x[i] - m) * (x[i] - m);
}

// Note [Batch norm + ReLU]
// y = relu(bn(x)) in one pass, as cuDNN's CUDNN_BATCHNORM_OPS_BN_ACTIVATION: the
// forward clamps as it writes y, and the backward takes ReLU's gradient from the
// saved y, dy' = (y <= 0 ? 0 : dy) (y <= 0 exactly where bn(x) <= 0, NaN passes:
// PyTorch's threshold_backward), computed where dy is read, so neither bn(x) nor
// dy' is ever stored. Sums and outputs then equal the unfused pair's bit for bit.
// dy' as a bit mask (+0.0 where y <= 0): GCC vectorises it where `y <= 0 ? 0 : g` stays a branch.
template <bool Relu, typename T>
T masked(T g, T y) {
  if constexpr (Relu) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const U keep = U(0) - U(!(y <= T(0)));
    return std::bit_cast<T>(std::bit_cast<U>(g) & keep);
  }
  return g;
}
// The masked dy[0, W) as a vector. Built with a plain loop, which GCC turns into SIMD
// compares and blends; a vector-extension compare is split into scalar ones without AVX.
template <bool Relu, typename T>
Vec<T> load_masked(const T* dy, const T* y) {
  if constexpr (Relu) {
    T g[kWidth<T>];
    for (int64_t j = 0; j < kWidth<T>; ++j) g[j] = masked<Relu>(dy[j], y[j]);
    return load(g);
  }
  return load(dy);
}

// sdy += Σ dy[i] and sdyx += Σ dy[i]·(x[i] − m), i < n (dy masked by y, Relu).
template <bool Relu, typename T>
void run_dy_sums(const T* dy, const T* y, const T* x, int64_t n, T m, Lanes<T>& sdy, Lanes<T>& sdyx) {
  constexpr int64_t W = kWidth<T>;
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const Vec<T> g0 = load_masked<Relu>(dy + i, y + i), g1 = load_masked<Relu>(dy + i + W, y + i + W);
    sdy.a0 += g0;
    sdy.a1 += g1;
    sdyx.a0 += g0 * (load(x + i) - m);
    sdyx.a1 += g1 * (load(x + i + W) - m);
  }
  for (; i < n; ++i) {
    const T g = masked<Relu>(dy[i], y[i]);
    sdy.rest += g;
    sdyx.rest += g * (x[i] - m);
  }
}

struct BnGeom {
  int64_t N, C, S;
  int64_t slab(int64_t n, int64_t c0) const { return (n * C + c0) * S; }
};

// Runs fn(block_begin, block_end) over channel blocks, in parallel. See Note [Batch norm passes].
template <typename Fn>
void for_each_block(const BnGeom& g, const Fn& fn) {
  const int64_t cb = std::max<int64_t>(1, kSlab / g.S);
  const int64_t blocks = (g.C + cb - 1) / cb;
  const int64_t grain = std::max<int64_t>(1, kGrainElems / std::max<int64_t>(g.N * g.S * cb, 1));
  parallel_for(0, blocks, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(b * cb, std::min(g.C, (b + 1) * cb));
  });
}

// Calls part(offset, length) for the pieces of channel c's rows in a fixed order, and
// end_run() after each run of at most kRun elements: a row longer than kRun is cut,
// shorter rows of consecutive samples share a run (long rows, S >= kLongRow). A run per
// row of 64 cost a horizontal sum every 64 elements: the statistics of 8x8 maps ran at
// a third of the speed of 32x32 ones.
template <typename Part, typename EndRun>
void for_each_run(const BnGeom& g, int64_t c, const Part& part, const EndRun& end_run) {
  if (g.S >= kRun) {
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t s = 0; s < g.S; s += kRun) {
        part(g.slab(n, c) + s, std::min(kRun, g.S - s));
        end_run();
      }
    return;
  }
  const int64_t rows = kRun / g.S;
  for (int64_t n0 = 0; n0 < g.N; n0 += rows) {
    for (int64_t n = n0; n < std::min(g.N, n0 + rows); ++n) part(g.slab(n, c), g.S);
    end_run();
  }
}

// Short rows: acc[k] = Σ_n v(n, k) over slab positions k, then out[j] = Σ_s acc[j·S + s].
template <typename T, typename Fn>
void slab_sums(const BnGeom& g, int64_t c0, int64_t c1, std::vector<double>& acc, double* out, const Fn& v) {
  const int64_t L = (c1 - c0) * g.S;
  acc.assign(static_cast<size_t>(L), 0.0);
  for (int64_t n = 0; n < g.N; ++n) {
    const int64_t base = g.slab(n, c0);
    for (int64_t k = 0; k < L; ++k) acc[k] += v(base + k, k);
  }
  for (int64_t j = 0; j < c1 - c0; ++j) {
    double s = 0.0;
    for (int64_t t = 0; t < g.S; ++t) s += acc[j * g.S + t];
    out[j] = s;
  }
}

// Per-position copy of per-channel values: out[j·S + s] = v[j].
template <typename T>
void expand(const double* v, int64_t channels, int64_t S, std::vector<T>& out) {
  out.resize(static_cast<size_t>(channels * S));
  for (int64_t j = 0; j < channels; ++j)
    for (int64_t s = 0; s < S; ++s) out[j * S + s] = static_cast<T>(v[j]);
}

// Note [Batch norm mean in two parts]: the mean is rounded to T for the SIMD
// passes, and with a large mean that step matters: for x in [1000, 1001] in
// float32 it is off by up to 3e-5, 1e-4 standard deviations, an error every y
// carried. The passes subtract hi = T(mean) (exact near the mean, Sterbenz's
// lemma) and then lo = T(mean − hi); and Σ (x − hi)² = m2 + M·(mean − hi)².
template <typename T>
double mean_rest(double mean) {
  return mean - static_cast<double>(static_cast<T>(mean));
}

// mean[j] and m2[j] = Σ (x − mean)² for channels c0 + j (two passes, see Note [Batch norm passes]).
template <typename T>
void block_stats(const T* x, const BnGeom& g, int64_t c0, int64_t c1, double* mean, double* m2,
                 std::vector<double>& acc, std::vector<T>& mk) {
  const double inv_m = 1.0 / static_cast<double>(g.N * g.S);
  if (g.S >= kLongRow) {
    for (int64_t c = c0; c < c1; ++c) {
      double sum = 0.0, sq = 0.0;
      const T first = x[g.slab(0, c)];
      const T shift = std::isfinite(static_cast<double>(first)) ? first : T(0);  // an inf keeps its mean inf
      Lanes<T> acc;
      for_each_run(
          g, c, [&](int64_t o, int64_t l) { run_sum(x + o, l, shift, acc); }, [&] { sum += acc.take(); });
      mean[c - c0] = static_cast<double>(shift) + sum * inv_m;
      const T m = static_cast<T>(mean[c - c0]);
      for_each_run(
          g, c, [&](int64_t o, int64_t l) { run_sq_dev(x + o, l, m, acc); }, [&] { sq += acc.take(); });
      m2[c - c0] = sq;
    }
  } else {
    slab_sums<T>(g, c0, c1, acc, mean, [&](int64_t i, int64_t) { return static_cast<double>(x[i]); });
    for (int64_t j = 0; j < c1 - c0; ++j) mean[j] *= inv_m;
    expand(mean, c1 - c0, g.S, mk);
    slab_sums<T>(g, c0, c1, acc, m2, [&](int64_t i, int64_t k) {
      const T d = x[i] - mk[k];
      return static_cast<double>(d * d);
    });
  }
  for (int64_t j = 0; j < c1 - c0; ++j) {  // Note [Batch norm mean in two parts]
    const double r = mean_rest<T>(mean[j]);
    m2[j] = std::max(0.0, m2[j] - r * r / inv_m);
  }
}

// sdy[j] = Σ dy and sdyx[j] = Σ dy·(x − mean) for channels c0 + j.
template <bool Relu, typename T>
void block_dy_sums(const T* dy, const T* y, const T* x, const BnGeom& g, int64_t c0, int64_t c1,
                   const std::vector<T>& mk, double* sdy, double* sdyx, std::vector<double>& acc) {
  if (g.S >= kLongRow) {
    for (int64_t c = c0; c < c1; ++c) {
      double a = 0.0, b = 0.0;
      const T m = mk[(c - c0) * g.S];
      Lanes<T> la, lb;
      for_each_run(
          g, c, [&](int64_t o, int64_t l) { run_dy_sums<Relu>(dy + o, y + o, x + o, l, m, la, lb); },
          [&] { a += la.take(), b += lb.take(); });
      sdy[c - c0] = a, sdyx[c - c0] = b;
    }
    return;
  }
  const auto gv = [&](int64_t i) { return masked<Relu>(dy[i], y[i]); };
  slab_sums<T>(g, c0, c1, acc, sdy, [&](int64_t i, int64_t) { return static_cast<double>(gv(i)); });
  slab_sums<T>(g, c0, c1, acc, sdyx, [&](int64_t i, int64_t k) { return static_cast<double>(gv(i) * (x[i] - mk[k])); });
}

// x, y: [N, C, S]; weight, bias, running stats, save_*: [C]. Relu: y = relu(bn(x)).
template <bool Relu>
void batch_norm_forward_cpu(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor& running_mean,
                            Tensor& running_var, bool training, double momentum, double eps, Tensor& y,
                            Tensor& save_mean, Tensor& save_invstd) {
  if (is_reduced_float(x.dtype())) {  // See Note [Half compute]: float32 kernel, y rounded once.
    Tensor y32 = empty(y.shape(), TensorOptions(DType::Float32, y.device()));
    batch_norm_forward_cpu<Relu>(x.to(DType::Float32), weight, bias, running_mean, running_var, training, momentum, eps,
                                 y32, save_mean, save_invstd);
    y.copy_(y32);
    return;
  }
  const BnGeom g{x.size(0), x.size(1), x.size(2)};
  const double m_count = static_cast<double>(g.N * g.S);
  DDL_DISPATCH_FLOAT(x.dtype(), "batch_norm", [&] {
    using T = scalar_t;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    const T* wp = weight.defined() ? weight.data<T>() : nullptr;
    const T* bp = bias.defined() ? bias.data<T>() : nullptr;
    T* rm = running_mean.defined() ? running_mean.data<T>() : nullptr;
    T* rv = running_var.defined() ? running_var.data<T>() : nullptr;
    T* sm = save_mean.data<T>();
    T* si = save_invstd.data<T>();
    for_each_block(g, [&](int64_t c0, int64_t c1) {
      const int64_t nc = c1 - c0, L = nc * g.S;
      std::vector<double> mean(nc), m2(nc), scale(nc), shift(nc), rest(nc), acc;
      std::vector<T> mk, rk, sk, bk;
      if (training) block_stats(xp, g, c0, c1, mean.data(), m2.data(), acc, mk);
      for (int64_t j = 0; j < nc; ++j) {
        const int64_t c = c0 + j;
        double var;
        if (training) {
          var = m2[j] / m_count;
          if (rm) {  // running stats take the unbiased variance, as PyTorch
            rm[c] = static_cast<T>((1.0 - momentum) * rm[c] + momentum * mean[j]);
            rv[c] = static_cast<T>((1.0 - momentum) * rv[c] + momentum * m2[j] / (m_count - 1.0));
          }
        } else {
          mean[j] = rm[c];
          var = rv[c];
        }
        const double invstd = 1.0 / std::sqrt(var + eps);
        rest[j] = mean_rest<T>(mean[j]);
        sm[c] = static_cast<T>(mean[j]);
        si[c] = static_cast<T>(invstd);
        scale[j] = (wp ? wp[c] : 1.0) * invstd;
        shift[j] = bp ? bp[c] : 0.0;
      }
      // y = ((x − hi) − lo)·(w·invstd) + b, Note [Batch norm mean in two parts]
      expand(mean.data(), nc, g.S, mk);
      expand(rest.data(), nc, g.S, rk);
      expand(scale.data(), nc, g.S, sk);
      expand(shift.data(), nc, g.S, bk);
      for (int64_t n = 0; n < g.N; ++n) {
        const T* xr = xp + g.slab(n, c0);
        T* yr = yp + g.slab(n, c0);
        for (int64_t k = 0; k < L; ++k) {
          const T v = ((xr[k] - mk[k]) - rk[k]) * sk[k] + bk[k];
          yr[k] = Relu && v < T(0) ? T(0) : v;  // relu keeps NaN and -0.0, as UnaryOp::Relu
        }
      }
    });
  });
}

// grad_y, x, grad_input: [N, C, S]; weight, save_*, grad_weight, grad_bias: [C].
// With batch stats: dx = w·invstd·(dy − Σdy/M − x̂·Σ(dy·x̂)/M), x̂ = (x − μ)·invstd.
// With running stats: dx = w·invstd·dy. Both: dw = Σ dy·x̂, db = Σ dy.
// Relu: y is relu(bn(x)) and dy is the gradient of y (Note [Batch norm + ReLU]).
template <bool Relu>
void batch_norm_backward_impl(const Tensor& grad_y, const Tensor& x, const Tensor& y, const Tensor& weight,
                              const Tensor& save_mean, const Tensor& save_invstd, bool training,
                              double eps /*passed on only: save_invstd has it*/, Tensor& grad_input,
                              Tensor& grad_weight, Tensor& grad_bias) {
  if (is_reduced_float(x.dtype())) {  // See Note [Half compute]: float32 kernel, grad_input rounded once.
    Tensor gi32 =
        grad_input.defined() ? empty(grad_input.shape(), TensorOptions(DType::Float32, x.device())) : Tensor();
    batch_norm_backward_impl<Relu>(grad_y.to(DType::Float32), x.to(DType::Float32), Relu ? y.to(DType::Float32) : y,
                                   weight, save_mean, save_invstd, training, eps, gi32, grad_weight, grad_bias);
    if (grad_input.defined()) grad_input.copy_(gi32);
    return;
  }
  const BnGeom g{x.size(0), x.size(1), x.size(2)};
  const double inv_m = 1.0 / static_cast<double>(g.N * g.S);
  DDL_DISPATCH_FLOAT(x.dtype(), "batch_norm_backward", [&] {
    using T = scalar_t;
    const T* gp = grad_y.data<T>();
    const T* xp = x.data<T>();
    const T* yp = Relu ? y.data<T>() : gp;  // never read without Relu
    const T* wp = weight.defined() ? weight.data<T>() : nullptr;
    const T* sm = save_mean.data<T>();
    const T* si = save_invstd.data<T>();
    T* gi = grad_input.defined() ? grad_input.data<T>() : nullptr;
    T* gw = grad_weight.defined() ? grad_weight.data<T>() : nullptr;
    T* gb = grad_bias.defined() ? grad_bias.data<T>() : nullptr;
    const bool reduce = gw || gb || (gi && training);
    for_each_block(g, [&](int64_t c0, int64_t c1) {
      const int64_t nc = c1 - c0, L = nc * g.S;
      std::vector<double> mean(nc), sdy(nc, 0.0), sdyx(nc, 0.0), a(nc), k(nc), b(nc), acc;
      std::vector<T> mk, ak, kk, bk;
      for (int64_t j = 0; j < nc; ++j) mean[j] = sm[c0 + j];
      expand(mean.data(), nc, g.S, mk);
      if (reduce) block_dy_sums<Relu>(gp, yp, xp, g, c0, c1, mk, sdy.data(), sdyx.data(), acc);
      for (int64_t j = 0; j < nc; ++j) {
        const int64_t c = c0 + j;
        const double invstd = si[c];
        if (gw) gw[c] = static_cast<T>(sdyx[j] * invstd);
        if (gb) gb[c] = static_cast<T>(sdy[j]);
        // dx = a·dy + k·(x − μ) + b
        a[j] = (wp ? wp[c] : 1.0) * invstd;
        k[j] = training ? -a[j] * invstd * invstd * sdyx[j] * inv_m : 0.0;
        b[j] = training ? -a[j] * sdy[j] * inv_m : 0.0;
      }
      if (!gi) return;
      expand(a.data(), nc, g.S, ak);
      expand(k.data(), nc, g.S, kk);
      expand(b.data(), nc, g.S, bk);
      for (int64_t n = 0; n < g.N; ++n) {
        const T* gr = gp + g.slab(n, c0);
        const T* xr = xp + g.slab(n, c0);
        const T* yr = yp + g.slab(n, c0);
        T* dr = gi + g.slab(n, c0);
        for (int64_t i = 0; i < L; ++i) dr[i] = ak[i] * masked<Relu>(gr[i], yr[i]) + kk[i] * (xr[i] - mk[i]) + bk[i];
      }
    });
  });
}

void batch_norm_backward_cpu(const Tensor& grad_y, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                             const Tensor& save_invstd, bool training, double eps, Tensor& grad_input,
                             Tensor& grad_weight, Tensor& grad_bias) {
  batch_norm_backward_impl<false>(grad_y, x, Tensor(), weight, save_mean, save_invstd, training, eps, grad_input,
                                  grad_weight, grad_bias);
}

}  // namespace

using kernels::batch_norm_backward_kernel;
using kernels::batch_norm_forward_kernel;
using kernels::batch_norm_relu_backward_kernel;
using kernels::batch_norm_relu_forward_kernel;
DDL_REGISTER_KERNEL(batch_norm_forward_kernel, CPU, &batch_norm_forward_cpu<false>);
DDL_REGISTER_KERNEL(batch_norm_backward_kernel, CPU, &batch_norm_backward_cpu);
DDL_REGISTER_KERNEL(batch_norm_relu_forward_kernel, CPU, &batch_norm_forward_cpu<true>);
DDL_REGISTER_KERNEL(batch_norm_relu_backward_kernel, CPU, &batch_norm_backward_impl<true>);

}  // namespace ddl::cpu
