// CTC loss, forward and backward side by side, following ATen's LossCTC.cpp (1.13): alpha over the
// extended target l' = (blank, l1, blank, l2, ..., blank), nll = −log(alpha[T−1, 2L] + alpha[T−1, 2L−1]),
// and the gradient exp(lp) − exp(log Σ_{s: l'_s = c} alpha·beta + nll − lp), per sequence on the host.
#include <algorithm>
#include <cmath>
#include <limits>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/ctc_loss.h>
#include <ddl/tensor/core/factory.h>

namespace ddl {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b, double c = kNegInf) {
  double m = std::max({a, b, c});
  if (m == kNegInf) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

struct Problem {
  int64_t T, N, C;
  std::vector<double> lp;                    // [T, N, C]
  std::vector<std::vector<int64_t>> labels;  // per sequence
  std::vector<int64_t> in_len;
};

// The extended label of position s: blank at even s, label (s − 1) / 2 at odd s.
int64_t ext(const std::vector<int64_t>& l, int64_t s, int64_t blank) { return s % 2 == 0 ? blank : l[s / 2]; }

}  // namespace

Variable ctc_loss(const Variable& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                  const std::vector<int64_t>& target_lengths, int64_t blank, Reduction reduction, bool zero_infinity) {
  DDL_CHECK(log_probs.defined() && targets.defined(), "ctc_loss: log_probs and targets must be defined");
  DDL_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2, "ctc_loss: log_probs must be [T, N, C] or [T, C], got ",
            log_probs.shape());
  DDL_CHECK(log_probs.dtype() == DType::Float32 || log_probs.dtype() == DType::Float64,
            "ctc_loss: log_probs must be float32 or float64, got ", describe(log_probs.data()));
  DDL_CHECK(targets.dtype() == DType::Int64 || targets.dtype() == DType::Int32,
            "ctc_loss: targets must be int64 or int32, got ", describe(targets));
  const bool batched = log_probs.dim() == 3;
  Problem p{log_probs.size(0), batched ? log_probs.size(1) : 1, log_probs.size(-1), {}, {}, input_lengths};
  DDL_CHECK(blank >= 0 && blank < p.C, "ctc_loss: blank ", blank, " must be in the label range [0, ", p.C, ")");
  DDL_CHECK(static_cast<int64_t>(input_lengths.size()) == p.N, "ctc_loss: input_lengths has ", input_lengths.size(),
            " entries for a batch of ", p.N);
  DDL_CHECK(static_cast<int64_t>(target_lengths.size()) == p.N, "ctc_loss: target_lengths has ", target_lengths.size(),
            " entries for a batch of ", p.N);
  const std::vector<int64_t> tv = to_vector<int64_t>(targets.to(DType::Int64).contiguous().to(Device::cpu()));
  const bool padded = batched && targets.dim() == 2;
  DDL_CHECK(padded || targets.dim() == 1, "ctc_loss: targets must be [N, S] or 1-d, got ", targets.shape());
  int64_t offset = 0;
  for (int64_t n = 0; n < p.N; ++n) {
    const int64_t tl = target_lengths[n], il = input_lengths[n];
    DDL_CHECK(il >= 0 && il <= p.T, "ctc_loss: input_lengths[", n, "] = ", il, " must be in [0, ", p.T, "]");
    DDL_CHECK(tl >= 0, "ctc_loss: target_lengths[", n, "] = ", tl, " is negative");
    const int64_t start = padded ? n * targets.size(1) : offset;
    DDL_CHECK(padded ? tl <= targets.size(1) : start + tl <= targets.numel(), "ctc_loss: target_lengths[", n,
              "] = ", tl, " runs past targets ", targets.shape());
    std::vector<int64_t> l(tv.begin() + start, tv.begin() + start + tl);
    for (int64_t c : l) DDL_CHECK(c >= 0 && c < p.C, "ctc_loss: target label ", c, " is outside [0, ", p.C, ")");
    p.labels.push_back(std::move(l));
    offset += tl;
  }
  p.lp = to_vector<double>(log_probs.data().to(DType::Float64).contiguous().to(Device::cpu()));
  auto lp = [&p](int64_t t, int64_t n, int64_t c) { return p.lp[(t * p.N + n) * p.C + c]; };

  // Forward: alpha per sequence, kept for the backward.
  std::vector<std::vector<double>> alphas(p.N);
  std::vector<double> nll(p.N);
  for (int64_t n = 0; n < p.N; ++n) {
    const auto& l = p.labels[n];
    const int64_t L = static_cast<int64_t>(l.size()), S = 2 * L + 1, Tn = p.in_len[n];
    std::vector<double>& a = alphas[n];
    a.assign(std::max<int64_t>(Tn, 1) * S, kNegInf);
    if (Tn == 0) {
      nll[n] = L == 0 ? 0.0 : INFINITY;  // an empty input aligns only with an empty target
      continue;
    }
    a[0] = lp(0, n, blank);
    if (L > 0) a[1] = lp(0, n, l[0]);
    for (int64_t t = 1; t < Tn; ++t)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t c = ext(l, s, blank);
        const double a1 = a[(t - 1) * S + s], a2 = s > 0 ? a[(t - 1) * S + s - 1] : kNegInf;
        const double a3 = s > 1 && c != blank && c != ext(l, s - 2, blank) ? a[(t - 1) * S + s - 2] : kNegInf;
        a[t * S + s] = log_add(a1, a2, a3) + lp(t, n, c);
      }
    nll[n] = -log_add(a[(Tn - 1) * S + 2 * L], L > 0 ? a[(Tn - 1) * S + 2 * L - 1] : kNegInf);
  }
  std::vector<double> loss(p.N);
  for (int64_t n = 0; n < p.N; ++n) loss[n] = zero_infinity && std::isinf(nll[n]) ? 0.0 : nll[n];
  const DType dt = log_probs.dtype();
  Tensor out;
  if (reduction == Reduction::None) {
    out = from_vector(loss, batched ? Shape{p.N} : Shape{}).to(dt);
  } else {
    double total = 0;
    for (int64_t n = 0; n < p.N; ++n)
      total += reduction == Reduction::Mean ? loss[n] / static_cast<double>(std::max<int64_t>(target_lengths[n], 1))
                                            : loss[n];
    if (reduction == Reduction::Mean) total /= static_cast<double>(p.N);
    out = scalar_tensor(total, TensorOptions(dt, Device::cpu()));
  }
  out = out.to(log_probs.device());

  const Shape shape = log_probs.shape();
  return autograd::make_result(
      out, "CtcLossBackward", {&log_probs},
      [p, alphas, nll, blank, reduction, zero_infinity, target_lengths, shape, dt, batched](
          const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        const std::vector<double> gv = to_vector<double>(g.to(DType::Float64).contiguous().to(Device::cpu()));
        std::vector<double> grad(p.lp.size(), 0.0);
        auto lp = [&p](int64_t t, int64_t n, int64_t c) { return p.lp[(t * p.N + n) * p.C + c]; };
        for (int64_t n = 0; n < p.N; ++n) {
          double gr = reduction == Reduction::None ? gv[n] : gv[0];
          if (reduction == Reduction::Mean)
            gr /= static_cast<double>(std::max<int64_t>(target_lengths[n], 1)) * static_cast<double>(p.N);
          const int64_t Tn = p.in_len[n];
          if (Tn == 0 || (zero_infinity && std::isinf(nll[n]))) continue;
          const auto& l = p.labels[n];
          const int64_t L = static_cast<int64_t>(l.size()), S = 2 * L + 1;
          const std::vector<double>& a = alphas[n];
          std::vector<double> b(Tn * S, kNegInf), lcab(Tn * p.C, kNegInf);
          b[(Tn - 1) * S + 2 * L] = lp(Tn - 1, n, blank);
          if (L > 0) b[(Tn - 1) * S + 2 * L - 1] = lp(Tn - 1, n, l[L - 1]);
          for (int64_t t = Tn - 2; t >= 0; --t)
            for (int64_t s = 0; s < S; ++s) {
              const int64_t c = ext(l, s, blank);
              const double b1 = b[(t + 1) * S + s], b2 = s < 2 * L ? b[(t + 1) * S + s + 1] : kNegInf;
              const double b3 =
                  s < 2 * L - 1 && c != blank && ext(l, s + 2, blank) != c ? b[(t + 1) * S + s + 2] : kNegInf;
              b[t * S + s] = log_add(b1, b2, b3) + lp(t, n, c);
            }
          for (int64_t t = 0; t < Tn; ++t)
            for (int64_t s = 0; s < S; ++s) {
              double& x = lcab[t * p.C + ext(l, s, blank)];
              x = log_add(x, a[t * S + s] + b[t * S + s]);
            }
          for (int64_t t = 0; t < Tn; ++t)
            for (int64_t c = 0; c < p.C; ++c) {
              const double v = lp(t, n, c);
              grad[(t * p.N + n) * p.C + c] = (std::exp(v) - std::exp(lcab[t * p.C + c] + nll[n] - v)) * gr;
            }
        }
        (void)batched;
        return {from_vector(grad, shape).to(dt).to(g.device())};
      });
}

}  // namespace ddl
