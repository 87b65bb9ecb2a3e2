// Loss functions on Variables. cross_entropy saves log_softmax(logits) and its
// backward is softmax − target distribution in one kernel; mse_loss is written
// with tensor ops since it is memory-bound and simple.
#include "autograd/ops/loss.h"

#include "autograd/node.h"
#include "autograd/ops/double_backward.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/reduce.h"

namespace ddl {

Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& opts) {
  const Tensor logp = ddl::log_softmax(logits.data(), 1);
  Tensor loss = nll_loss_forward(logp, target, opts, "cross_entropy");
  return autograd::make_result(
      loss, "CrossEntropyBackward", {&logits},
      [logp, target, opts](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        return {nll_loss_backward(g, logp, target, opts, /*through_log_softmax=*/true)};
      },
      autograd::cross_entropy_double_backward(logits, target, opts));  // double_backward.cpp
}

Variable nll_loss(const Variable& log_probs, const Tensor& target, Reduction reduction, int64_t ignore_index) {
  const Tensor lp = log_probs.data();
  const CrossEntropyOptions opts{reduction, ignore_index, 0.0};
  Tensor loss = nll_loss_forward(lp, target, opts, "nll_loss");
  return autograd::make_result(loss, "NllLossBackward", {&log_probs},
                               [lp, target, opts](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
                                 return {nll_loss_backward(g, lp, target, opts, /*through_log_softmax=*/false)};
                               });
}

Variable mse_loss(const Variable& a, const Variable& b, Reduction reduction) {
  DDL_CHECK(a.defined() && b.defined(), "mse_loss: input and target must be defined");
  DDL_CHECK(a.shape() == b.shape(), "mse_loss: input ", a.shape(), " and target ", b.shape(),
            " must have the same shape");
  const Tensor diff = ddl::sub(a.data(), b.data());
  const Tensor sq = ddl::mul(diff, diff);
  Tensor loss = reduction == Reduction::None ? sq : reduction == Reduction::Sum ? ddl::sum(sq) : ddl::mean(sq);
  const double n = static_cast<double>(a.numel());
  return autograd::make_result(
      loss, "MseLossBackward", {&a, &b},
      [diff, reduction, n](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        // d/da = 2·(a − b)·g (÷ n for Mean); g is a scalar unless reduction is None.
        const double k = reduction == Reduction::Mean ? 2.0 / n : 2.0;
        const Tensor ga = ddl::mul(diff, ddl::mul(g, k));
        return {needs[0] ? ga : Tensor(), needs[1] ? ddl::neg(ga) : Tensor()};
      },
      autograd::mse_loss_double_backward(a, b, reduction));  // double_backward.cpp
}

}  // namespace ddl
