// CPU kernels for softmax / log_softmax (forward, backward) and the NLL loss
// over log-probs (forward, backward, fused with log_softmax for cross_entropy).
// Each row along the softmax dim and each sample is owned by one thread, and
// loss totals are summed serially, so results do not depend on the thread count.
// The per-element math is shared with CUDA (tensor/kernels/softmax_functors.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <ddl/tensor/core/dtype.h>
#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/cpu/softmax_rows.h>
#include <ddl/tensor/kernels/softmax_functors.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl::cpu {
namespace {

using softmax_math::Dims3;
using softmax_math::split_at;

// Columns of `inner` handled together: the D loop runs over a short contiguous
// strip, so the inner loop vectorises when inner > 1 and is trivial when inner == 1.
constexpr int64_t kStrip = 64;

// Calls fn(o, j0, j1) for every (outer index, strip of inner columns), in parallel.
template <typename Fn>
void for_each_strip(const Dims3& g, const Fn& fn) {
  const int64_t strips = (g.inner + kStrip - 1) / kStrip;
  const int64_t grain = ddl::detail::grain_for(8192, g.d * std::min(g.inner, kStrip));
  parallel_for(0, g.outer * strips, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / strips, j0 = (t % strips) * kStrip;
      fn(o, j0, std::min(g.inner, j0 + kStrip));
    }
  });
}

// x, y: [outer, D, inner]. softmax: y = exp(x − max) / Σ exp(x − max);
// log_softmax: y = (x − max) − log Σ exp(x − max).
void softmax_forward_cpu(const Tensor& x, int64_t dim, bool log, Tensor& y) {
  const Dims3 g = split_at(x.shape(), dim);
  if (g.inner == 1 && x.dtype() == DType::Float32)
    return softmax_rows_f32(x.data<float>(), y.data<float>(), g.outer, g.d, log);
  DDL_DISPATCH_FLOAT(x.dtype(), "softmax", [&] {
    const scalar_t* xp = x.data<scalar_t>();
    scalar_t* yp = y.data<scalar_t>();
    for_each_strip(g, [&](int64_t o, int64_t j0, int64_t j1) {
      const int64_t w = j1 - j0;
      scalar_t mx[kStrip];
      double s[kStrip];
      const scalar_t* xo = xp + o * g.d * g.inner + j0;
      scalar_t* yo = yp + o * g.d * g.inner + j0;
      for (int64_t j = 0; j < w; ++j) mx[j] = -std::numeric_limits<scalar_t>::infinity(), s[j] = 0.0;
      for (int64_t k = 0; k < g.d; ++k)
        for (int64_t j = 0; j < w; ++j) mx[j] = softmax_math::row_max(mx[j], xo[k * g.inner + j]);
      for (int64_t k = 0; k < g.d; ++k)
        for (int64_t j = 0; j < w; ++j) {
          const scalar_t e = std::exp(xo[k * g.inner + j] - mx[j]);
          s[j] += e;
          if (!log) yo[k * g.inner + j] = e;
        }
      for (int64_t j = 0; j < w; ++j) s[j] = softmax_math::norm(log, s[j]);
      for (int64_t k = 0; k < g.d; ++k)
        for (int64_t j = 0; j < w; ++j) {
          scalar_t& out = yo[k * g.inner + j];
          out = log ? softmax_math::log_softmax_out(xo[k * g.inner + j], mx[j], s[j])
                    : softmax_math::softmax_out(out, s[j]);
        }
    });
  });
}

// grad_y, y, grad_x: [outer, D, inner]. softmax: gx = y·(g − Σ g·y);
// log_softmax: gx = g − exp(y)·Σ g.
void softmax_backward_cpu(const Tensor& grad_y, const Tensor& y, int64_t dim, bool log, Tensor& grad_x) {
  const Dims3 g = split_at(y.shape(), dim);
  if (g.inner == 1 && y.dtype() == DType::Float32)
    return softmax_rows_backward_f32(grad_y.data<float>(), y.data<float>(), grad_x.data<float>(), g.outer, g.d, log);
  DDL_DISPATCH_FLOAT(y.dtype(), "softmax_backward", [&] {
    const scalar_t* gp = grad_y.data<scalar_t>();
    const scalar_t* yp = y.data<scalar_t>();
    scalar_t* gxp = grad_x.data<scalar_t>();
    for_each_strip(g, [&](int64_t o, int64_t j0, int64_t j1) {
      const int64_t w = j1 - j0, base = o * g.d * g.inner + j0;
      double s[kStrip] = {};
      for (int64_t k = 0; k < g.d; ++k)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t i = base + k * g.inner + j;
          s[j] += log ? gp[i] : softmax_math::softmax_grad_term(gp[i], yp[i]);
        }
      for (int64_t k = 0; k < g.d; ++k)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t i = base + k * g.inner + j;
          gxp[i] =
              log ? softmax_math::log_softmax_grad(gp[i], yp[i], s[j]) : softmax_math::softmax_grad(gp[i], yp[i], s[j]);
        }
    });
  });
}

// log_probs: [N, C, S]; target: [N, S]; loss: [N, S] or []. Per sample:
// (1 − ε)·(−lp[t]) + ε·(−Σ_c lp_c / C), 0 when ignored.
void nll_loss_forward_cpu(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opts,
                          const char* op, Tensor& loss) {
  const int64_t N = log_probs.size(0), C = log_probs.size(1), S = log_probs.size(2);
  const double eps = opts.label_smoothing;
  DDL_DISPATCH_FLOAT(log_probs.dtype(), op, [&] {
    const scalar_t* lp = log_probs.data<scalar_t>();
    const int64_t* tp = target.data<int64_t>();
    // Per-sample losses in double, reduced serially below.
    std::vector<double> per(static_cast<size_t>(N * S));
    parallel_for(0, N, ddl::detail::grain_for(4096, C * S), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t s = 0; s < S; ++s) {
          const int64_t t = tp[n * S + s];
          double l = 0.0;
          if (t != opts.ignore_index) {
            nll_math::check_target(t, n, s, S, C, op);
            l = nll_math::sample_loss(lp + n * C * S + s, S, C, t, eps);
          }
          per[static_cast<size_t>(n * S + s)] = l;
        }
    });
    scalar_t* out = loss.data<scalar_t>();
    if (opts.reduction == Reduction::None) {
      for (int64_t i = 0; i < N * S; ++i) out[i] = static_cast<scalar_t>(per[static_cast<size_t>(i)]);
      return;
    }
    double total = 0.0;
    int64_t count = 0;
    for (int64_t i = 0; i < N * S; ++i) {
      total += per[static_cast<size_t>(i)];
      count += tp[i] != opts.ignore_index;
    }
    // Mean over zero samples is 0/0 = NaN, as in PyTorch.
    out[0] = static_cast<scalar_t>(opts.reduction == Reduction::Sum ? total : total / static_cast<double>(count));
  });
}

// grad_loss: [N, S] or []; grad_input: [N, C, S]. With q the target
// distribution ((1 − ε)·onehot(t) + ε/C, 0 when ignored) and g the sample's
// gradient: w.r.t. log-probs −g·q; through log_softmax g·(exp(lp)·Σq − q).
void nll_loss_backward_cpu(const Tensor& grad_loss, const Tensor& log_probs, const Tensor& target,
                           const CrossEntropyOptions& opts, bool through_log_softmax, Tensor& grad_input) {
  const int64_t N = log_probs.size(0), C = log_probs.size(1), S = log_probs.size(2);
  const double eps = opts.label_smoothing;
  DDL_DISPATCH_FLOAT(log_probs.dtype(), "nll_loss_backward", [&] {
    const scalar_t* lp = log_probs.data<scalar_t>();
    const int64_t* tp = target.data<int64_t>();
    const scalar_t* gl = grad_loss.data<scalar_t>();
    scalar_t* gi = grad_input.data<scalar_t>();
    double scale = 1.0;
    if (opts.reduction == Reduction::Mean) {
      int64_t count = 0;
      for (int64_t i = 0; i < N * S; ++i) count += tp[i] != opts.ignore_index;
      scale = 1.0 / static_cast<double>(count);
    }
    parallel_for(0, N, ddl::detail::grain_for(4096, C * S), [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t s = 0; s < S; ++s) {
          const int64_t t = tp[n * S + s];
          const scalar_t* row = lp + n * C * S + s;
          scalar_t* grow = gi + n * C * S + s;
          if (t == opts.ignore_index) {
            for (int64_t c = 0; c < C; ++c) grow[c * S] = 0;
            continue;
          }
          nll_math::check_target(t, n, s, S, C, "nll_loss_backward");
          const double g = (opts.reduction == Reduction::None ? gl[n * S + s] : gl[0]) * scale;
          const nll_math::TargetDist q(eps, C);
          const double on = q.on, off = q.off;  // locals: stores to grow cannot alias them
          for (int64_t c = 0; c < C; ++c)
            grow[c * S] = nll_math::loss_grad(g, row[c * S], c == t ? on : off, through_log_softmax);
        }
    });
  });
}

}  // namespace

using kernels::nll_loss_backward_kernel;
using kernels::nll_loss_forward_kernel;
using kernels::softmax_backward_kernel;
using kernels::softmax_forward_kernel;
DDL_REGISTER_KERNEL(softmax_forward_kernel, CPU, &softmax_forward_cpu);
DDL_REGISTER_KERNEL(softmax_backward_kernel, CPU, &softmax_backward_cpu);
DDL_REGISTER_KERNEL(nll_loss_forward_kernel, CPU, &nll_loss_forward_cpu);
DDL_REGISTER_KERNEL(nll_loss_backward_kernel, CPU, &nll_loss_backward_cpu);

}  // namespace ddl::cpu
