// Classification losses on Variables. cross_entropy with class-index targets
// saves log_softmax(logits) and its backward is softmax − target distribution
// in one kernel (tensor/ops/softmax.h). Class weights and probability targets take
// a tensor-op path, see Note [Cross entropy as a target matrix]. The
// elementwise losses live in regression_loss.cpp.
#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/loss.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/indexing.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

namespace {

// [1, C, 1, ...] for logits of rank `dim`: how a per-class vector broadcasts.
Shape class_shape(int64_t dim, int64_t C) {
  std::vector<int64_t> s(static_cast<size_t>(dim), 1);
  s[1] = C;
  return Shape(s);
}

// Note [Cross entropy as a target matrix]
// Every variant of PyTorch's cross_entropy is loss_n = −Σ_c M[n, c] logp[n, c]
// for a matrix M of the logits' shape, reduced with a divisor D for Mean:
//   class indices t:  M = valid_n w_c ((1 − ε) [c = t_n] + ε / C),  D = Σ_n valid_n w[t_n]
//   probabilities q:  M = w_c ((1 − ε) q + ε / C),                    D = N·d1·…
// (w = 1 without weights; ε the label smoothing). Its gradient in the logits is
// g·(softmax Σ_c M − M), which is the whole backward.
struct TargetMatrix {
  Tensor M;
  Tensor denominator;  // scalar
  // Class-index targets: bool [N, 1, d1, ...], false where the target is ignore_index. Those
  // rows get a zero gradient even when Mean divides by a zero denominator (every target
  // ignored: PyTorch's loss is NaN and its gradient 0). Undefined for probability targets.
  Tensor valid;
};

// grad with the ignored rows of tm zeroed (see TargetMatrix::valid).
Tensor zero_ignored(const Tensor& grad, const TargetMatrix& tm) {
  return tm.valid.defined() ? ddl::where(tm.valid, grad, zeros({}, TensorOptions(grad.dtype(), grad.device()))) : grad;
}

TargetMatrix target_matrix(const Tensor& z, const Tensor& target, const Tensor& weight, const CrossEntropyOptions& opts,
                           const char* op = "cross_entropy") {
  const int64_t C = z.size(1);
  const TensorOptions fo(z.dtype(), z.device());
  const Tensor w = weight.defined() ? weight.reshape(class_shape(z.dim(), C)) : Tensor();
  const double eps = opts.label_smoothing;
  if (is_floating(target.dtype())) {
    DDL_CHECK(target.shape() == z.shape(), op, ": probability targets ", target.shape(),
              " must have the logits' shape ", z.shape());
    Tensor M = ddl::add(ddl::mul(target.to(z.dtype()), 1.0 - eps), eps / double(C));
    if (w.defined()) M = ddl::mul(M, w);
    return {M, scalar_tensor(double(z.numel() / std::max<int64_t>(C, 1)), fo), Tensor()};
  }
  DDL_CHECK(target.dtype() == DType::Int64, op, ": target must be int64 class indices or floating ",
            "probabilities, got ", describe(target));
  std::vector<int64_t> ts = z.shape().vec();
  ts.erase(ts.begin() + 1);
  DDL_CHECK(target.shape() == Shape(ts), op, ": target ", target.shape(), " does not match logits ", z.shape(),
            " (expected ", Shape(ts), ")");
  const std::vector<int64_t> tv = to_vector<int64_t>(target.to(Device::cpu()));
  for (size_t i = 0; i < tv.size(); ++i)
    DDL_CHECK(tv[i] == opts.ignore_index || (tv[i] >= 0 && tv[i] < C), op, ": target ", tv[i], " of sample ", i,
              " is out of range for ", C, " classes (ignore_index ", opts.ignore_index, ")");
  const Tensor classes =
      arange(0.0, double(C), 1.0, TensorOptions(z.dtype())).to(z.device()).reshape(class_shape(z.dim(), C));
  const Tensor t = target.to(z.dtype()).unsqueeze(1);
  const Tensor is_valid = ddl::ne(target, double(opts.ignore_index)).unsqueeze(1);
  const Tensor valid = is_valid.to(z.dtype());
  Tensor picked = ddl::mul(ddl::eq(t, classes).to(z.dtype()), valid);  // [c = t_n], 0 when ignored
  Tensor spread = ddl::mul(valid.expand(z.shape()), eps / double(C));
  if (w.defined()) picked = ddl::mul(picked, w), spread = ddl::mul(spread, w);
  return {ddl::add(ddl::mul(picked, 1.0 - eps), spread), ddl::sum(picked), is_valid};
}

// An unbatched input [C] with a 0-d class index (or [C] probabilities), which PyTorch takes:
// computed as a batch of one, a Reduction::None loss then 0-d.
bool unbatched(const Variable& x, const Tensor& target) {
  return x.defined() && x.dim() == 1 && target.defined() && target.dim() == (is_floating(target.dtype()) ? 1 : 0);
}
Variable unbatched_loss(const Variable& loss, Reduction r) { return r == Reduction::None ? loss.reshape({}) : loss; }

}  // namespace

Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& opts) {
  if (unbatched(logits, target))
    return unbatched_loss(cross_entropy(logits.unsqueeze(0), target.unsqueeze(0), opts), opts.reduction);
  if (autocast::needs_float32(logits))  // See Note [Autocast]
    return cross_entropy(autocast::to_float32(logits), target, opts);
  if (target.defined() && is_floating(target.dtype())) return cross_entropy(logits, target, Tensor(), opts);
  DDL_CHECK(logits.defined() && target.defined(), "cross_entropy: logits and target must be defined");
  DDL_CHECK(logits.dim() >= 2, "cross_entropy: expected input of shape [N, C] or [N, C, d1, ...] (or [C] with a ",
            "0-d target), got ", logits.shape(), " with target ", target.shape());
  const Tensor logp = ddl::log_softmax(logits.data(), 1);
  Tensor loss = nll_loss_forward(logp, target, opts, "cross_entropy");
  return autograd::make_result(
      loss, "CrossEntropyBackward", {&logits},
      [logp, target, opts](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        return {nll_loss_backward(g, logp, target, opts, /*through_log_softmax=*/true)};
      },
      autograd::cross_entropy_double_backward(logits, target, opts));  // double_backward.cpp
}

namespace {
// logp where the target matrix M weighs it, 0 elsewhere: M·logp must not turn a class M
// leaves out (an ignored row, a masked logit of −inf) into 0 · (−inf) = NaN. PyTorch's
// loss reads only the weighted entries.
Tensor zero_where_unweighted(const Tensor& logp, const Tensor& M) {
  return ddl::masked_fill(logp, ddl::eq(M, 0.0), 0.0);
}
}  // namespace

Variable cross_entropy(const Variable& logits, const Tensor& target, const Tensor& weight,
                       const CrossEntropyOptions& opts) {
  DDL_CHECK(logits.defined() && target.defined(), "cross_entropy: logits and target must be defined");
  if (unbatched(logits, target))
    return unbatched_loss(cross_entropy(logits.unsqueeze(0), target.unsqueeze(0), weight, opts), opts.reduction);
  if (autocast::needs_float32(logits))  // See Note [Autocast]
    return cross_entropy(autocast::to_float32(logits), target, weight, opts);
  if (!weight.defined() && !is_floating(target.dtype())) return cross_entropy(logits, target, opts);
  if (is_reduced_float(logits.dtype())) {  // in float32, the loss rounded once (PyTorch computes bfloat16)
    const auto widen = [](const Tensor& t) { return t.defined() && is_floating(t.dtype()) ? t.to(DType::Float32) : t; };
    return cross_entropy(logits.to(DType::Float32), widen(target), widen(weight), opts).to(logits.dtype());
  }
  const Tensor z = logits.data();
  DDL_CHECK(z.dim() >= 2, "cross_entropy: logits must be [N, C] or [N, C, d1, ...], got ", z.shape());
  DDL_CHECK(z.dtype() == DType::Float32 || z.dtype() == DType::Float64,
            "cross_entropy: logits must be float32 or float64, got ", describe(z));
  DDL_CHECK(opts.label_smoothing >= 0 && opts.label_smoothing <= 1,
            "cross_entropy: label_smoothing must be in [0, 1], got ", opts.label_smoothing);
  if (weight.defined()) {
    DDL_CHECK(weight.dim() == 1 && weight.size(0) == z.size(1), "cross_entropy: weight must be [", z.size(1),
              "] (one per class), got ", weight.shape());
    DDL_CHECK(weight.dtype() == z.dtype() && weight.device() == z.device(), "cross_entropy: weight is ",
              describe(weight), " but logits are ", describe(z));
  }
  const TargetMatrix tm = target_matrix(z, target, weight, opts);
  const Tensor logp = ddl::log_softmax(z, 1);
  const Tensor per_sample = ddl::neg(ddl::sum(ddl::mul(tm.M, zero_where_unweighted(logp, tm.M)), {1}));
  const Reduction r = opts.reduction;
  Tensor loss = r == Reduction::None  ? per_sample
                : r == Reduction::Sum ? ddl::sum(per_sample)
                                      : ddl::div(ddl::sum(per_sample), tm.denominator);
  return autograd::make_result(
      std::move(loss), "CrossEntropyBackward", {&logits},
      [logp, tm, r](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        const Tensor factor = r == Reduction::None  ? g.unsqueeze(1)
                              : r == Reduction::Sum ? g
                                                    : ddl::div(g, tm.denominator);
        const Tensor row_mass = ddl::sum(tm.M, {1}, /*keepdim=*/true);
        return {zero_ignored(ddl::mul(ddl::sub(ddl::mul(ddl::exp(logp), row_mass), tm.M), factor), tm)};
      },
      autograd::cross_entropy_matrix_double_backward(logits, tm.M, tm.denominator, r,
                                                     tm.valid));  // double_backward.cpp
}

Variable nll_loss(const Variable& log_probs, const Tensor& target, Reduction reduction, int64_t ignore_index) {
  if (unbatched(log_probs, target))
    return unbatched_loss(nll_loss(log_probs.unsqueeze(0), target.unsqueeze(0), reduction, ignore_index), reduction);
  if (autocast::needs_float32(log_probs))  // See Note [Autocast]
    return nll_loss(autocast::to_float32(log_probs), target, reduction, ignore_index);
  const Tensor lp = log_probs.data();
  const CrossEntropyOptions opts{reduction, ignore_index, 0.0};
  Tensor loss = nll_loss_forward(lp, target, opts, "nll_loss");
  return autograd::make_result(
      loss, "NllLossBackward", {&log_probs},
      [lp, target, opts](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        return {nll_loss_backward(g, lp, target, opts, /*through_log_softmax=*/false)};
      },
      autograd::nll_loss_double_backward(lp, target, opts));  // double_backward.cpp
}

// Weighted: loss_n = −w[t_n] logp[n, t_n], the target matrix of Note [Cross entropy as a
// target matrix] with ε = 0; the gradient in log_probs is −M·factor, linear in g.
Variable nll_loss(const Variable& log_probs, const Tensor& target, const Tensor& weight, Reduction reduction,
                  int64_t ignore_index) {
  if (!weight.defined()) return nll_loss(log_probs, target, reduction, ignore_index);
  DDL_CHECK(log_probs.defined() && target.defined(), "nll_loss: log_probs and target must be defined");
  if (unbatched(log_probs, target))
    return unbatched_loss(nll_loss(log_probs.unsqueeze(0), target.unsqueeze(0), weight, reduction, ignore_index),
                          reduction);
  if (autocast::needs_float32(log_probs))  // See Note [Autocast]
    return nll_loss(autocast::to_float32(log_probs), target, weight, reduction, ignore_index);
  if (is_reduced_float(log_probs.dtype()))  // in float32, the loss rounded once
    return nll_loss(log_probs.to(DType::Float32), target, weight.to(DType::Float32), reduction, ignore_index)
        .to(log_probs.dtype());
  const Tensor lp = log_probs.data();
  DDL_CHECK(lp.dim() >= 2, "nll_loss: log_probs must be [N, C] or [N, C, d1, ...], got ", lp.shape());
  DDL_CHECK(target.dtype() == DType::Int64, "nll_loss: target must be int64 class indices, got ", describe(target));
  DDL_CHECK(weight.dim() == 1 && weight.size(0) == lp.size(1), "nll_loss: weight must be [", lp.size(1),
            "] (one per class), got ", weight.shape());
  DDL_CHECK(weight.dtype() == lp.dtype() && weight.device() == lp.device(), "nll_loss: weight is ", describe(weight),
            " but log_probs are ", describe(lp));
  const TargetMatrix tm =
      target_matrix(lp, target, weight, CrossEntropyOptions{reduction, ignore_index, 0.0}, "nll_loss");
  const Tensor per_sample = ddl::neg(ddl::sum(ddl::mul(tm.M, zero_where_unweighted(lp, tm.M)), {1}));
  Tensor loss = reduction == Reduction::None  ? per_sample
                : reduction == Reduction::Sum ? ddl::sum(per_sample)
                                              : ddl::div(ddl::sum(per_sample), tm.denominator);
  const Tensor minus_m = ddl::neg(tm.M);
  return autograd::make_result(
      std::move(loss), "NllLossBackward", {&log_probs},
      [minus_m, tm, reduction](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        const Tensor factor = reduction == Reduction::None  ? g.unsqueeze(1)
                              : reduction == Reduction::Sum ? g
                                                            : ddl::div(g, tm.denominator);
        return {zero_ignored(ddl::mul(minus_m, factor), tm)};
      },
      [minus_m, tm, reduction](const Variable& g, const std::vector<bool>&) -> std::vector<Variable> {
        const Variable factor = reduction == Reduction::None  ? g.unsqueeze(1)
                                : reduction == Reduction::Sum ? g
                                                              : ddl::div(g, Variable(tm.denominator));
        const Variable grad = ddl::mul(Variable(minus_m), factor);
        return {tm.valid.defined()
                    ? ddl::where(tm.valid, grad, Variable(zeros({}, TensorOptions(grad.dtype(), grad.device()))))
                    : grad};
      });
}

}  // namespace ddl
