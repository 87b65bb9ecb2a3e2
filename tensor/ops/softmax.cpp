// Frontends for softmax, log_softmax and the NLL / cross-entropy losses: check
// arguments, make inputs contiguous, allocate outputs, call the device kernels
// (tensor/cpu/softmax.cpp).
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl::kernels {
DDL_DEFINE_KERNEL(softmax_forward_kernel, SoftmaxForwardFn);
DDL_DEFINE_KERNEL(softmax_backward_kernel, SoftmaxBackwardFn);
DDL_DEFINE_KERNEL(nll_loss_forward_kernel, NllLossForwardFn);
DDL_DEFINE_KERNEL(nll_loss_backward_kernel, NllLossBackwardFn);
}  // namespace ddl::kernels

namespace ddl {
namespace {

Tensor softmax_impl(const Tensor& x, int64_t dim, bool log, const char* op) {
  DDL_CHECK(x.defined(), op, ": input is undefined");
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a float input, got ", x.dtype());
  // 16-bit inputs compute in float32 and round once, as PyTorch's CPU kernels accumulate in float.
  if (is_reduced_float(x.dtype())) return softmax_impl(x.to(DType::Float32), dim, log, op).to(x.dtype());
  // A 0-dim tensor behaves as one element along dim 0, as in PyTorch.
  const Tensor xc = (x.dim() == 0 ? x.reshape({1}) : x).contiguous();
  const int64_t d = wrap_dim(dim, xc.dim(), op);
  Tensor y = empty(xc.shape(), {x.dtype(), x.device()});
  if (y.numel() > 0) kernels::softmax_forward_kernel(x.device())(xc, d, log, y);
  return y.view(x.shape());
}

Tensor softmax_backward_impl(const Tensor& grad_y, const Tensor& y, int64_t dim, bool log, const char* op) {
  DDL_CHECK(grad_y.defined() && y.defined(), op, ": grad_y and y must be defined");
  DDL_CHECK(grad_y.shape() == y.shape(), op, ": grad_y has shape ", grad_y.shape(), " but y has ", y.shape());
  DDL_CHECK(grad_y.dtype() == y.dtype(), op, ": grad_y is ", grad_y.dtype(), " but y is ", y.dtype());
  if (is_reduced_float(y.dtype()))
    return softmax_backward_impl(grad_y.to(DType::Float32), y.to(DType::Float32), dim, log, op).to(y.dtype());
  const Tensor yc = (y.dim() == 0 ? y.reshape({1}) : y).contiguous();
  const Tensor gc = grad_y.reshape(yc.shape()).contiguous();
  const int64_t d = wrap_dim(dim, yc.dim(), op);
  Tensor gx = empty(yc.shape(), {y.dtype(), y.device()});
  if (gx.numel() > 0) kernels::softmax_backward_kernel(y.device())(gc, yc, d, log, gx);
  return gx.view(y.shape());
}

// Checks scores [N, C, *] against target [N, *] and returns the loss's shape.
Shape check_loss_args(const Tensor& scores, const Tensor& target, const CrossEntropyOptions& opts, const char* op) {
  DDL_CHECK(scores.defined() && target.defined(), op, ": input and target must be defined");
  DDL_CHECK(is_floating(scores.dtype()), op, ": expected float scores, got ", scores.dtype());
  DDL_CHECK(target.dtype() == DType::Int64, op, ": expected int64 class indices as target, got ", target.dtype());
  DDL_CHECK(scores.dim() >= 2, op,
            ": expected input of shape [N, C] or [N, C, d1, ...] (or [C] with a 0-d target), got ", scores.shape(),
            " with target ", target.shape());
  DDL_CHECK(scores.device() == target.device(), op, ": input is on ", scores.device(), " but target is on ",
            target.device());
  Shape expected = scores.shape();
  expected.erase(1);
  DDL_CHECK(target.shape() == expected, op, ": input ", scores.shape(), " needs a target of shape ", expected, ", got ",
            target.shape());
  DDL_CHECK(opts.label_smoothing >= 0.0 && opts.label_smoothing <= 1.0, op, ": label_smoothing must be in [0, 1], got ",
            opts.label_smoothing);
  return expected;
}

// scores as [N, C, S], target as [N, S].
Tensor scores_ncs(const Tensor& s) {
  const int64_t n = s.size(0), c = s.size(1);
  const int64_t rest = n * c == 0 ? 1 : s.numel() / (n * c);
  return s.contiguous().view({n, c, rest});
}
Tensor target_ns(const Tensor& t, const Tensor& scores_ncs) {
  return t.contiguous().view({scores_ncs.size(0), scores_ncs.size(2)});
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_impl(x, dim, false, "softmax"); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_impl(x, dim, true, "log_softmax"); }
Tensor softmax_backward(const Tensor& grad_y, const Tensor& y, int64_t dim) {
  return softmax_backward_impl(grad_y, y, dim, false, "softmax_backward");
}
Tensor log_softmax_backward(const Tensor& grad_y, const Tensor& y, int64_t dim) {
  return softmax_backward_impl(grad_y, y, dim, true, "log_softmax_backward");
}

namespace {
// An unbatched input [C] with a 0-d target, as PyTorch takes: a batch of one.
bool unbatched(const Tensor& x, const Tensor& target) {
  return x.defined() && x.dim() == 1 && target.defined() && target.dim() == 0;
}
}  // namespace

Tensor nll_loss_forward(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opts,
                        const char* op) {
  if (unbatched(log_probs, target))
    return nll_loss_forward(log_probs.unsqueeze(0), target.unsqueeze(0), opts, op).reshape({});
  const Shape loss_shape = check_loss_args(log_probs, target, opts, op);
  if (is_reduced_float(log_probs.dtype()))  // in float32, rounded once
    return nll_loss_forward(log_probs.to(DType::Float32), target, opts, op).to(log_probs.dtype());
  const Tensor lp = scores_ncs(log_probs);
  const Tensor t = target_ns(target, lp);
  const TensorOptions o{log_probs.dtype(), log_probs.device()};
  Tensor loss = opts.reduction == Reduction::None ? empty(t.shape(), o) : empty({}, o);
  kernels::nll_loss_forward_kernel(log_probs.device())(lp, t, opts, op, loss);
  return opts.reduction == Reduction::None ? loss.view(loss_shape) : loss;
}

Tensor nll_loss_backward(const Tensor& grad_loss, const Tensor& log_probs, const Tensor& target,
                         const CrossEntropyOptions& opts, bool through_log_softmax) {
  if (unbatched(log_probs, target))
    return nll_loss_backward(opts.reduction == Reduction::None ? grad_loss.reshape({1}) : grad_loss,
                             log_probs.unsqueeze(0), target.unsqueeze(0), opts, through_log_softmax)
        .reshape(log_probs.shape());
  const char* op = "nll_loss_backward";
  const Shape loss_shape = check_loss_args(log_probs, target, opts, op);
  const Shape expected = opts.reduction == Reduction::None ? loss_shape : Shape{};
  DDL_CHECK(grad_loss.defined() && grad_loss.numel() == expected.numel(), op, ": grad_loss has shape ",
            grad_loss.shape(), ", expected ", expected);
  DDL_CHECK(grad_loss.dtype() == log_probs.dtype(), op, ": grad_loss is ", grad_loss.dtype(), " but the input is ",
            log_probs.dtype());
  if (is_reduced_float(log_probs.dtype()))
    return nll_loss_backward(grad_loss.to(DType::Float32), log_probs.to(DType::Float32), target, opts,
                             through_log_softmax)
        .to(log_probs.dtype());
  const Tensor lp = scores_ncs(log_probs);
  const Tensor t = target_ns(target, lp);
  const Tensor g = opts.reduction == Reduction::None ? grad_loss.contiguous().view(t.shape()) : grad_loss.contiguous();
  Tensor gi = empty(lp.shape(), {log_probs.dtype(), log_probs.device()});
  kernels::nll_loss_backward_kernel(log_probs.device())(g, lp, t, opts, through_log_softmax, gi);
  return gi.view(log_probs.shape());
}

namespace {
// Class-probability targets (PyTorch 1.13's cross_entropy with a float target of the
// input's shape): per sample −Σ_c t'_c·log_softmax(x)_c with t' = (1 − ε)·t + ε/C;
// Mean divides by the number of samples. An unbatched [C] input takes a [C] target.
Tensor cross_entropy_probs(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& opts) {
  const char* op = "cross_entropy";
  if (logits.dim() == 1 && target.dim() == 1) {
    const Tensor l = cross_entropy_probs(logits.unsqueeze(0), target.unsqueeze(0), opts);
    return opts.reduction == Reduction::None ? l.reshape({}) : l;
  }
  DDL_CHECK(logits.dim() >= 2 && is_floating(logits.dtype()), op,
            ": expected float logits of shape [N, C] or [N, C, d1, ...], got ", describe(logits));
  DDL_CHECK(target.shape() == logits.shape(), op, ": expected int64 class indices as target, or class probabilities",
            " of the input's shape ", logits.shape(), ", got ", describe(target));
  DDL_CHECK(opts.label_smoothing >= 0.0 && opts.label_smoothing <= 1.0, op, ": label_smoothing must be in [0, 1], got ",
            opts.label_smoothing);
  Tensor t = target.to(logits.dtype());
  const double eps = opts.label_smoothing;
  if (eps > 0) t = add(mul(t, 1.0 - eps), eps / static_cast<double>(logits.size(1)));
  const Tensor per_sample = neg(sum(mul(t, log_softmax(logits, 1)), {1}));
  return opts.reduction == Reduction::None  ? per_sample
         : opts.reduction == Reduction::Sum ? sum(per_sample)
                                            : mean(per_sample);
}
}  // namespace

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction, int64_t ignore_index) {
  if (unbatched(log_probs, target))
    return nll_loss(log_probs.unsqueeze(0), target.unsqueeze(0), reduction, ignore_index).reshape({});
  return nll_loss_forward(log_probs, target, CrossEntropyOptions{reduction, ignore_index, 0.0}, "nll_loss");
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& opts) {
  if (unbatched(logits, target)) return cross_entropy(logits.unsqueeze(0), target.unsqueeze(0), opts).reshape({});
  if (logits.defined() && target.defined() && is_floating(target.dtype()))
    return cross_entropy_probs(logits, target, opts);
  check_loss_args(logits, target, opts, "cross_entropy");
  return nll_loss_forward(log_softmax(logits, 1), target, opts, "cross_entropy");
}

}  // namespace ddl
