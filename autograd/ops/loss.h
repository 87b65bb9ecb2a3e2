// Differentiable losses (forward and backward side by side in loss.cpp and
// regression_loss.cpp), as torch.nn.functional's. Class-index targets are
// plain int64 tensors; elementwise losses take the target as a Variable and
// differentiate it too. Input and target of elementwise losses must have the
// same shape (no broadcasting).
#pragma once

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl {

// logits: [N, C] or [N, C, d1, ...]; target: int64 [N] or [N, d1, ...]. As
// torch.nn.functional.cross_entropy with ignore_index and label_smoothing
// (see ddl::cross_entropy in tensor/ops/softmax.h). The backward is one fused pass.
// A floating target of the logits' shape holds class probabilities instead.
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& opts = {});
// With class weights `weight` ([C], or undefined for none): a sample of class t
// counts w[t]; Mean divides by the summed weights of the non-ignored targets
// (by the sample count for probability targets), as PyTorch.
Variable cross_entropy(const Variable& logits, const Tensor& target, const Tensor& weight,
                       const CrossEntropyOptions& opts = {});
// log_probs as produced by log_softmax(x, 1); same target rules.
Variable nll_loss(const Variable& log_probs, const Tensor& target, Reduction reduction = Reduction::Mean,
                  int64_t ignore_index = -100);
// With class weights ([C], or undefined for none): a sample of class t counts w[t] and
// Mean divides by the summed weights of the non-ignored targets, as torch.nn.functional.nll_loss.
Variable nll_loss(const Variable& log_probs, const Tensor& target, const Tensor& weight,
                  Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
// (a − b)², reduced. a and b must have the same shape.
Variable mse_loss(const Variable& a, const Variable& b, Reduction reduction = Reduction::Mean);
// |a − b|, reduced.
Variable l1_loss(const Variable& a, const Variable& b, Reduction reduction = Reduction::Mean);
// 0.5 d² / beta where |d| < beta, else |d| − 0.5 beta (d = a − b); beta = 0 is l1_loss.
Variable smooth_l1_loss(const Variable& a, const Variable& b, Reduction reduction = Reduction::Mean, double beta = 1.0);
// 0.5 d² where |d| < delta, else delta (|d| − 0.5 delta); delta > 0.
Variable huber_loss(const Variable& a, const Variable& b, Reduction reduction = Reduction::Mean, double delta = 1.0);

// −w (y log x + (1 − y) log(1 − x)) with each log clamped to ≥ −100 (as PyTorch);
// x must lie in [0, 1]. weight: undefined, or broadcastable to x (not differentiated).
Variable binary_cross_entropy(const Variable& x, const Variable& y, const Tensor& weight = {},
                              Reduction reduction = Reduction::Mean);
// The same on logits z, computed stably: (1 − y) z + (1 + (p − 1) y) softplus(−z)
// with pos_weight p (broadcast over the last dim, e.g. [C]) or 1 when undefined.
Variable binary_cross_entropy_with_logits(const Variable& z, const Variable& y, const Tensor& weight = {},
                                          const Tensor& pos_weight = {}, Reduction reduction = Reduction::Mean);

// KL divergence with `input` holding log-probabilities: t (log t − input), or
// with log_target exp(t) (t − input); BatchMean divides the sum by the batch size.
enum class KLDivReduction { None, Mean, Sum, BatchMean };
Variable kl_div(const Variable& input, const Variable& target, KLDivReduction reduction = KLDivReduction::Mean,
                bool log_target = false);

}  // namespace ddl
