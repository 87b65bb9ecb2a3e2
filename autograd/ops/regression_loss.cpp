// Elementwise losses (mse, l1, smooth_l1, huber, binary cross-entropy on
// probabilities and on logits, KL divergence), each as a pointwise loss tensor
// plus its pointwise derivatives, written with tensor ops so any device with
// elementwise kernels runs them. Formulas and clamps follow PyTorch 1.13's
// ATen (Loss.cpp, BinaryOps / derivatives.yaml); see loss.h. Each also has a
// differentiable form of its slopes, so its gradient can be differentiated again.
#include <functional>
#include <limits>
#include <optional>

#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/loss.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

namespace {

// Maps the per-element upstream factor (g, or g / n for a mean) to one input's gradient.
using PointwiseGrad = std::function<Tensor(const Tensor& factor)>;

// The pointwise slopes d loss / d a and d loss / d b as differentiable functions of the
// inputs, for double backward (Note [Double backward] in autograd/node.cpp): built only
// when a second derivative is asked for, from the same formulas as the Tensor slopes.
using DiffSlopes = std::function<std::pair<Variable, Variable>()>;

// Reduces `pointwise` (Mean divides the sum by `divisor`) and records the backward.
Variable finish(const char* name, const Variable& a, const Variable& b, const Tensor& pointwise, Reduction r,
                double divisor, PointwiseGrad da, PointwiseGrad db, DiffSlopes slopes = nullptr) {
  Tensor loss = r == Reduction::None  ? pointwise
                : r == Reduction::Sum ? ddl::sum(pointwise)
                                      : ddl::div(ddl::sum(pointwise), divisor);
  autograd::DiffBackwardFn diff;
  if (slopes)
    diff = [r, divisor, slopes](const Variable& g, const std::vector<bool>& needs) -> std::vector<Variable> {
      const Variable factor = r == Reduction::Mean ? ddl::div(g, divisor) : g;
      const auto [sa, sb] = slopes();
      return {needs[0] ? ddl::mul(sa, factor) : Variable(), needs[1] ? ddl::mul(sb, factor) : Variable()};
    };
  return autograd::make_result(
      std::move(loss), name, {&a, &b},
      [r, divisor, da, db](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        const Tensor factor = r == Reduction::Mean ? ddl::div(g, divisor) : g;
        return {needs[0] ? da(factor) : Tensor(), needs[1] ? db(factor) : Tensor()};
      },
      std::move(diff));
}

// `w` (undefined, or already checked by weighted()) times v, as a constant factor.
Variable weighted_var(const Variable& v, const Tensor& w) { return w.defined() ? ddl::mul(v, Variable(w)) : v; }

void check_pair(const Variable& a, const Variable& b, const char* op) {
  DDL_CHECK(a.defined() && b.defined(), op, ": input and target must be defined");
  DDL_CHECK(a.shape() == b.shape(), op, ": input ", a.shape(), " and target ", b.shape(), " must have the same shape");
  DDL_CHECK(a.dtype() == b.dtype(), op, ": input is ", describe(a.data()), " but target is ", describe(b.data()));
}

// Input and target must be float tensors: PyTorch 1.13 has no integer kernels for these
// losses. Returns the dtype both are computed in when they differ, else nullopt.
enum class Mixed { Promote, Input, Target };
std::optional<DType> float_pair(const Variable& a, const Variable& b, const char* op, Mixed rule) {
  DDL_CHECK(a.defined() && b.defined(), op, ": input and target must be defined");
  DDL_CHECK(is_floating(a.dtype()) && is_floating(b.dtype()), op, ": expected float input and target, got ",
            describe(a.data()), " and ", describe(b.data()));
  if (a.dtype() == b.dtype()) return std::nullopt;
  return rule == Mixed::Promote ? promote_types(a.dtype(), b.dtype()) : rule == Mixed::Input ? a.dtype() : b.dtype();
}

// `w` (undefined, or broadcastable to shape) times t; the product must keep t's shape.
Tensor weighted(const Tensor& t, const Tensor& w, const char* op, const char* what) {
  if (!w.defined()) return t;
  bool fits = w.dim() <= t.dim();
  for (int64_t i = 1; fits && i <= w.dim(); ++i) fits = w.size(-i) == 1 || w.size(-i) == t.size(-i);
  DDL_CHECK(fits, op, ": ", what, " ", w.shape(), " must broadcast to the input ", t.shape());
  return ddl::mul(t, w);
}

Tensor scalar_like(const Tensor& t, double v) { return scalar_tensor(v, TensorOptions(t.dtype(), t.device())); }

double count(const Variable& a) { return static_cast<double>(a.numel()); }

// See Note [Autocast]: every loss here is on its float32 list. A 16-bit weight tensor is
// widened as well, as PyTorch casts each tensor argument.
bool widens(const Tensor& t) { return autocast::is_enabled() && t.defined() && is_reduced_float(t.dtype()); }
Tensor to_float32(const Tensor& t) { return widens(t) ? t.to(DType::Float32) : t; }
bool widens(const Variable& a, const Variable& b) { return autocast::needs_float32(a) || autocast::needs_float32(b); }

}  // namespace

Variable mse_loss(const Variable& a, const Variable& b, Reduction reduction) {
  if (autocast::needs_float32(a) || autocast::needs_float32(b))  // See Note [Autocast]
    return mse_loss(autocast::to_float32(a), autocast::to_float32(b), reduction);
  if (const auto t = float_pair(a, b, "mse_loss", Mixed::Promote)) return mse_loss(a.to(*t), b.to(*t), reduction);
  check_pair(a, b, "mse_loss");
  const Tensor diff = ddl::sub(a.data(), b.data());
  // d/da = 2 (a − b) g (÷ n for Mean).
  PointwiseGrad da = [diff](const Tensor& f) { return ddl::mul(diff, ddl::mul(f, 2.0)); };
  PointwiseGrad db = [diff](const Tensor& f) { return ddl::mul(diff, ddl::mul(f, -2.0)); };
  return autograd::with_double_backward(
      finish("MseLossBackward", a, b, ddl::mul(diff, diff), reduction, count(a), da, db),
      autograd::mse_loss_double_backward(a, b, reduction));  // double_backward.cpp
}

Variable l1_loss(const Variable& a, const Variable& b, Reduction reduction) {
  if (widens(a, b)) return l1_loss(autocast::to_float32(a), autocast::to_float32(b), reduction);
  if (const auto t = float_pair(a, b, "l1_loss", Mixed::Promote)) return l1_loss(a.to(*t), b.to(*t), reduction);
  check_pair(a, b, "l1_loss");
  const Tensor diff = ddl::sub(a.data(), b.data());
  const Tensor sgn = ddl::sign(diff);  // sign(0) = 0, as PyTorch's gradient
  PointwiseGrad da = [sgn](const Tensor& f) { return ddl::mul(sgn, f); };
  PointwiseGrad db = [sgn](const Tensor& f) { return ddl::neg(ddl::mul(sgn, f)); };
  // sign(a − b) is piecewise constant: its own derivative is zero (almost everywhere).
  DiffSlopes slopes = [sgn] { return std::pair{Variable(sgn), Variable(ddl::neg(sgn))}; };
  return finish("L1LossBackward", a, b, ddl::abs(diff), reduction, count(a), da, db, slopes);
}

Variable smooth_l1_loss(const Variable& a, const Variable& b, Reduction reduction, double beta) {
  DDL_CHECK(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  if (widens(a, b)) return smooth_l1_loss(autocast::to_float32(a), autocast::to_float32(b), reduction, beta);
  if (const auto t = float_pair(a, b, "smooth_l1_loss", Mixed::Promote))
    return smooth_l1_loss(a.to(*t), b.to(*t), reduction, beta);
  if (beta == 0) return l1_loss(a, b, reduction);
  check_pair(a, b, "smooth_l1_loss");
  const Tensor diff = ddl::sub(a.data(), b.data()), ad = ddl::abs(diff);
  const Tensor inner = ddl::lt(ad, beta);
  const Tensor loss = ddl::where(inner, ddl::div(ddl::mul(ddl::mul(diff, diff), 0.5), beta), ddl::sub(ad, 0.5 * beta));
  // d/da = sign(d) outside, d / beta inside (equal at |d| = beta) and at NaN, whose slope
  // is NaN as in PyTorch's smooth_l1_loss_backward.
  const Tensor outer = ddl::gt(ad, beta);
  const Tensor slope = ddl::where(outer, ddl::sign(diff), ddl::div(diff, beta));
  PointwiseGrad da = [slope](const Tensor& f) { return ddl::mul(slope, f); };
  PointwiseGrad db = [slope](const Tensor& f) { return ddl::neg(ddl::mul(slope, f)); };
  DiffSlopes slopes = [a, b, outer, diff, beta] {
    const Variable s = ddl::where(outer, Variable(ddl::sign(diff)), ddl::div(ddl::sub(a, b), beta));
    return std::pair{s, ddl::neg(s)};
  };
  return finish("SmoothL1LossBackward", a, b, loss, reduction, count(a), da, db, slopes);
}

Variable huber_loss(const Variable& a, const Variable& b, Reduction reduction, double delta) {
  DDL_CHECK(delta > 0, "huber_loss: delta must be positive, got ", delta);
  if (widens(a, b)) return huber_loss(autocast::to_float32(a), autocast::to_float32(b), reduction, delta);
  // PyTorch 1.13's huber_loss writes into a tensor like the input: the target takes its dtype.
  if (const auto t = float_pair(a, b, "huber_loss", Mixed::Input)) return huber_loss(a, b.to(*t), reduction, delta);
  check_pair(a, b, "huber_loss");
  const Tensor diff = ddl::sub(a.data(), b.data()), ad = ddl::abs(diff);
  const Tensor loss =
      ddl::where(ddl::lt(ad, delta), ddl::mul(ddl::mul(diff, diff), 0.5), ddl::mul(ddl::sub(ad, 0.5 * delta), delta));
  const Tensor slope = ddl::clamp(diff, -delta, delta);
  PointwiseGrad da = [slope](const Tensor& f) { return ddl::mul(slope, f); };
  PointwiseGrad db = [slope](const Tensor& f) { return ddl::neg(ddl::mul(slope, f)); };
  DiffSlopes slopes = [a, b, delta] {
    const Variable s = ddl::clamp(ddl::sub(a, b), -delta, delta);
    return std::pair{s, ddl::neg(s)};
  };
  return finish("HuberLossBackward", a, b, loss, reduction, count(a), da, db, slopes);
}

constexpr double kBceEps = static_cast<double>(1e-12f);  // see binary_cross_entropy

Variable binary_cross_entropy(const Variable& x, const Variable& y, const Tensor& weight, Reduction reduction) {
  // PyTorch refuses it under autocast (binary_cross_entropy_banned in autocast_mode.cpp): a
  // 16-bit sigmoid before it saturates, and the logits form is exact for any input.
  DDL_CHECK(!autocast::is_enabled(), "binary_cross_entropy is unsafe to autocast: a sigmoid right before it ",
            "loses precision in 16 bits. Use binary_cross_entropy_with_logits on the logits (safe to autocast), ",
            "or call it inside autocast::Guard(dtype, /*enabled=*/false) with float32 inputs");
  check_pair(x, y, "binary_cross_entropy");
  const Tensor xd = x.data(), yd = y.data();
  if (xd.numel() > 0) {
    const double lo = ddl::amin(xd).item(), hi = ddl::amax(xd).item();
    DDL_CHECK(lo >= 0 && hi <= 1, "binary_cross_entropy: every input must lie in [0, 1] (probabilities; use ",
              "binary_cross_entropy_with_logits for logits), got values in [", lo, ", ", hi, "]");
  }
  const Tensor log_x = ddl::log(xd), log_1mx = ddl::log(ddl::rsub(xd, 1.0));
  // PyTorch clamps each log at −100 so that x = 0 or 1 gives a finite loss.
  const Tensor lx = ddl::clamp(log_x, -100.0, std::nullopt), l1x = ddl::clamp(log_1mx, -100.0, std::nullopt);
  const Tensor loss =
      weighted(ddl::sub(ddl::mul(ddl::sub(yd, 1.0), l1x), ddl::mul(yd, lx)), weight, "binary_cross_entropy", "weight");
  // d/dx = (x − y) / max(x (1 − x), ε); d/dy = log(1 − x) − log(x) (PyTorch's -logit(x)).
  // ε is PyTorch's EPSILON, the float 1e-12f for every dtype (float64's gradient at x = 0 is
  // then 1.0000000039958e12, not 1e12).
  const Tensor slope_x = weighted(
      ddl::div(ddl::sub(xd, yd), ddl::clamp(ddl::mul(xd, ddl::rsub(xd, 1.0)), kBceEps, std::nullopt)), weight, "", "");
  const Tensor slope_y = weighted(ddl::sub(log_1mx, log_x), weight, "", "");
  PointwiseGrad dx = [slope_x](const Tensor& f) { return ddl::mul(slope_x, f); };
  PointwiseGrad dy = [slope_y](const Tensor& f) { return ddl::mul(slope_y, f); };
  DiffSlopes slopes = [x, y, weight] {
    const Variable denom = ddl::clamp(ddl::mul(x, ddl::rsub(x, 1.0)), kBceEps, std::nullopt);
    return std::pair{weighted_var(ddl::div(ddl::sub(x, y), denom), weight),
                     weighted_var(ddl::sub(ddl::log(ddl::rsub(x, 1.0)), ddl::log(x)), weight)};
  };
  return finish("BinaryCrossEntropyBackward", x, y, loss, reduction, count(x), dx, dy, slopes);
}

Variable binary_cross_entropy_with_logits(const Variable& z, const Variable& y, const Tensor& weight,
                                          const Tensor& pos_weight, Reduction reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  if (widens(z, y) || widens(weight) || widens(pos_weight))
    return binary_cross_entropy_with_logits(autocast::to_float32(z), autocast::to_float32(y), to_float32(weight),
                                            to_float32(pos_weight), reduction);
  // PyTorch 1.13 computes (1 − target)·input in place in (1 − target): the target's dtype wins.
  if (const auto t = float_pair(z, y, op, Mixed::Target))
    return binary_cross_entropy_with_logits(z.to(*t), y, weight, pos_weight, reduction);
  check_pair(z, y, op);
  const Tensor zd = z.data(), yd = y.data();
  // softplus(−z) = m + log(exp(−m) + exp(−z − m)) with m = max(−z, 0): no overflow for any z.
  const Tensor m = ddl::clamp(ddl::neg(zd), 0.0, std::nullopt);
  const Tensor sp_neg = ddl::add(m, ddl::log(ddl::add(ddl::exp(ddl::neg(m)), ddl::exp(ddl::sub(ddl::neg(zd), m)))));
  const Tensor one_m_y = ddl::rsub(yd, 1.0);
  Tensor loss, slope_z, slope_y;
  if (pos_weight.defined()) {
    const Tensor py = weighted(yd, pos_weight, op, "pos_weight");               // p y
    const Tensor lw = ddl::add(ddl::sub(py, yd), 1.0);                          // 1 + (p − 1) y
    loss = ddl::add(ddl::mul(one_m_y, zd), ddl::mul(lw, sp_neg));               // (1 − y) z + lw softplus(−z)
    slope_z = ddl::sub(ddl::mul(ddl::add(py, one_m_y), ddl::sigmoid(zd)), py);  // (p y + 1 − y) σ(z) − p y
    slope_y = ddl::add(ddl::neg(zd), weighted(sp_neg, ddl::sub(pos_weight, 1.0), op, "pos_weight"));
  } else {
    loss = ddl::add(ddl::mul(one_m_y, zd), sp_neg);
    slope_z = ddl::sub(ddl::sigmoid(zd), yd);
    slope_y = ddl::neg(zd);
  }
  loss = weighted(loss, weight, op, "weight");
  slope_z = weighted(slope_z, weight, op, "weight");
  slope_y = weighted(slope_y, weight, op, "weight");
  PointwiseGrad dz = [slope_z](const Tensor& f) { return ddl::mul(slope_z, f); };
  PointwiseGrad dy = [slope_y](const Tensor& f) { return ddl::mul(slope_y, f); };
  DiffSlopes slopes = [z, y, weight, pos_weight] {
    Variable sz, sy;
    if (pos_weight.defined()) {
      const Variable py = ddl::mul(y, Variable(pos_weight));
      const Variable mz = ddl::clamp(ddl::neg(z), 0.0, std::nullopt);  // softplus(−z) as in the forward
      const Variable sp = ddl::add(mz, ddl::log(ddl::add(ddl::exp(ddl::neg(mz)), ddl::exp(ddl::sub(ddl::neg(z), mz)))));
      sz = ddl::sub(ddl::mul(ddl::add(py, ddl::rsub(y, 1.0)), ddl::sigmoid(z)), py);
      sy = ddl::add(ddl::neg(z), ddl::mul(sp, Variable(ddl::sub(pos_weight, 1.0))));
    } else {
      sz = ddl::sub(ddl::sigmoid(z), y);
      sy = ddl::neg(z);
    }
    return std::pair{weighted_var(sz, weight), weighted_var(sy, weight)};
  };
  return finish("BinaryCrossEntropyWithLogitsBackward", z, y, loss, reduction, count(z), dz, dy, slopes);
}

Variable kl_div(const Variable& input, const Variable& target, KLDivReduction reduction, bool log_target) {
  if (widens(input, target))
    return kl_div(autocast::to_float32(input), autocast::to_float32(target), reduction, log_target);
  check_pair(input, target, "kl_div");
  const Tensor x = input.data(), t = target.data();
  Tensor loss, slope_x, slope_t;
  if (log_target) {
    const Tensor et = ddl::exp(t);
    loss = ddl::mul(et, ddl::sub(t, x));
    slope_x = ddl::neg(et);
    slope_t = ddl::mul(et, ddl::add(ddl::sub(t, x), 1.0));
  } else {
    // xlogy(t, t) − t x, where 0 log 0 = 0. The target's slope log t + 1 − x is NaN at
    // t = 0, as in PyTorch 1.13 (whose xlogy derivative is 0/0 there).
    const Tensor zero = ddl::eq(t, 0.0), log_t = ddl::log(t);
    loss = ddl::sub(ddl::where(zero, scalar_like(t, 0.0), ddl::mul(t, log_t)), ddl::mul(t, x));
    slope_x = ddl::neg(t);
    slope_t =
        ddl::where(zero, scalar_like(t, std::numeric_limits<double>::quiet_NaN()), ddl::sub(ddl::add(log_t, 1.0), x));
  }
  const Reduction r = reduction == KLDivReduction::None  ? Reduction::None
                      : reduction == KLDivReduction::Sum ? Reduction::Sum
                                                         : Reduction::Mean;
  const double divisor = reduction == KLDivReduction::BatchMean && x.dim() > 0 ? double(x.size(0)) : count(input);
  PointwiseGrad dx = [slope_x](const Tensor& f) { return ddl::mul(slope_x, f); };
  PointwiseGrad dt = [slope_t](const Tensor& f) { return ddl::mul(slope_t, f); };
  DiffSlopes slopes = [input, target, log_target, t] {
    if (log_target) {
      const Variable et = ddl::exp(target);
      return std::pair{ddl::neg(et), ddl::mul(et, ddl::add(ddl::sub(target, input), 1.0))};
    }
    // (log t + 1)·c − x with c NaN where t = 0, else 1: the value is NaN there, its slope in
    // x still −1 and in t NaN, as PyTorch's graph (a where() would cut x's slope to 0).
    const Tensor c =
        ddl::where(ddl::eq(t, 0.0), scalar_like(t, std::numeric_limits<double>::quiet_NaN()), scalar_like(t, 1.0));
    return std::pair{ddl::neg(target), ddl::sub(ddl::mul(ddl::add(ddl::log(target), 1.0), Variable(c)), input)};
  };
  return finish("KlDivBackward", input, target, loss, r, divisor, dx, dt, slopes);
}

}  // namespace ddl
