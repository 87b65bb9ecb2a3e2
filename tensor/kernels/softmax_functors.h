// The math of softmax / log_softmax and the NLL loss, shared by
// tensor/cpu/softmax.cpp and tensor/cuda/softmax.cu. Each piece says which
// precision it computes in (row sums in double, elementwise terms in T), so
// both backends round alike; the order of the row sums is each backend's own.
#pragma once

#include <cmath>
#include <cstdint>

#include <ddl/base/error.h>
#include <ddl/tensor/core/shape.h>
#include <ddl/tensor/kernels/functors.h>  // DDL_HOST_DEVICE

namespace ddl::softmax_math {

// Row maximum as std::max: NaNs are skipped (they still poison the row through exp).
// (Written as std::max is, by reference: g++ then emits the same vector code.)
template <typename T>
DDL_HOST_DEVICE const T& row_max(const T& m, const T& x) {
  if (m < x) return x;
  return m;
}

// Forward, with s = Σ exp(x − max) accumulated in double:
// norm is 1/s for softmax, log s for log_softmax.
DDL_HOST_DEVICE double norm(bool log, double s) { return log ? std::log(s) : 1.0 / s; }
// softmax: y = e·norm with e = exp(x − max) computed in T; log_softmax: y = (x − max) − norm,
// with x − max in T, as PyTorch: max + log s would round log s away next to a huge max
// (log_softmax([1e300, 1e300, 0]) is −log 2, not 0).
template <typename T>
DDL_HOST_DEVICE T softmax_out(T e, double nrm) {
  return static_cast<T>(e * nrm);
}
template <typename T>
DDL_HOST_DEVICE T log_softmax_out(T x, T mx, double nrm) {
  return static_cast<T>(static_cast<double>(x - mx) - nrm);
}

// Backward, with s = Σ term accumulated in double, term = g·y (in T) for
// softmax and g for log_softmax: softmax gx = y·(g − s); log_softmax gx = g − exp(y)·s.
template <typename T>
DDL_HOST_DEVICE T softmax_grad_term(const T& g, const T& y) {
  return g * y;
}
template <typename T>
DDL_HOST_DEVICE T softmax_grad(const T& g, const T& y, double s) {
  return static_cast<T>(y * (g - s));
}
template <typename T>
DDL_HOST_DEVICE T log_softmax_grad(const T& g, const T& y, double s) {
  return static_cast<T>(g - std::exp(y) * s);
}

// x viewed as [outer, D, inner] around `dim` (host side: both backends launch over it).
struct Dims3 {
  int64_t outer = 1, d = 1, inner = 1;
};
inline Dims3 split_at(const Shape& s, int64_t dim) {
  Dims3 r;
  for (int64_t i = 0; i < s.size(); ++i) (i < dim ? r.outer : i == dim ? r.d : r.inner) *= s[i];
  return r;
}

}  // namespace ddl::softmax_math

namespace ddl::nll_math {

// Loss of one sample whose log-probs are row[c·stride], c < C, with target t
// (a valid class): (1 − ε)·(−lp[t]) + ε·(−Σ_c lp_c / C), in double.
template <typename T>
DDL_HOST_DEVICE double sample_loss(const T* row, int64_t stride, int64_t C, int64_t t, double eps) {
  double l = -(1.0 - eps) * row[t * stride];
  if (eps > 0.0) {
    double sum = 0.0;
    for (int64_t c = 0; c < C; ++c) sum += row[c * stride];
    l -= eps * sum / static_cast<double>(C);
  }
  return l;
}

// The smoothed target distribution q = (1 − ε)·onehot(t) + ε/C: q is `on` at
// the target class and `off` elsewhere.
struct TargetDist {
  double on, off;
  DDL_HOST_DEVICE TargetDist(double eps, int64_t C)
      : on(1.0 - eps + eps / static_cast<double>(C)), off(eps / static_cast<double>(C)) {}
};

// Gradient of one sample's loss (scaled by g) w.r.t. the log-prob lp of a class
// with target probability q: −g·q, or through log_softmax g·(exp(lp) − q).
template <typename T>
DDL_HOST_DEVICE T loss_grad(double g, const T& lp, double q, bool through_log_softmax) {
  // A class with q = 0 gets +0 w.r.t. log-probs, as PyTorch's zero-filled gradient (not -0,
  // nor NaN for an infinite g).
  if (through_log_softmax) return static_cast<T>(g * (std::exp(lp) - q));
  return q == 0.0 ? T(0) : static_cast<T>(-g * q);
}

// The error both backends raise for a target outside [0, C) that is not ignore_index
// (kept out of line: it sits inside the CPU's per-sample loops).
[[gnu::noinline, gnu::cold]] inline void target_error(int64_t t, int64_t n, int64_t s, int64_t S, int64_t C,
                                                      const char* op) {
  DDL_CHECK(false, op, ": target ", t, " of sample ", n, S > 1 ? detail::str_cat(" (position ", s, ")") : "",
            " is out of range for ", C, " classes (expected 0..", C - 1, " or ignore_index)");
}
inline void check_target(int64_t t, int64_t n, int64_t s, int64_t S, int64_t C, const char* op) {
  if (t < 0 || t >= C) target_error(t, n, s, S, C, op);
}

}  // namespace ddl::nll_math
