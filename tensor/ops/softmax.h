// softmax / log_softmax along one dim, and the classification losses built on
// them (nll_loss, cross_entropy with ignore_index and label smoothing), with
// their backward pieces. Probability (soft) targets and class weights are not
// supported. Autograd wiring: autograd/ops/softmax.h and autograd/ops/loss.h.
#pragma once

#include <cstdint>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

// Along `dim` (negative counts from the end). Float inputs; results are contiguous.
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// Gradients w.r.t. x given the forward output y: y·(g − Σ g·y) and g − exp(y)·Σ g.
Tensor softmax_backward(const Tensor& grad_y, const Tensor& y, int64_t dim);
Tensor log_softmax_backward(const Tensor& grad_y, const Tensor& y, int64_t dim);

enum class Reduction { None, Mean, Sum };

struct CrossEntropyOptions {
  Reduction reduction = Reduction::Mean;
  int64_t ignore_index = -100;   // samples with this target add 0 and are not counted by Mean
  double label_smoothing = 0.0;  // ε in [0, 1]
};

// Inputs: scores [N, C] or [N, C, d1, ...] (class dim 1), target int64 [N] or
// [N, d1, ...] with class indices in [0, C) or ignore_index. As
// torch.nn.functional: per sample loss = (1 − ε)·(−logp[t]) + ε·(−Σ_c logp_c / C),
// 0 when ignored; Mean divides the sum by the number of non-ignored samples
// (NaN when there are none). None returns the per-sample losses [N, d1, ...].
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction = Reduction::Mean,
                int64_t ignore_index = -100);
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& opts = {});

// The pieces autograd uses. nll_loss_forward is nll_loss with label smoothing;
// `op` names the caller in error messages. Both take an unbatched [C] input with a
// 0-d target, as PyTorch's nll_loss_forward and nll_loss_backward.
Tensor nll_loss_forward(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opts,
                        const char* op = "nll_loss_forward");
// Gradient of nll_loss_forward w.r.t. log_probs, or, when `through_log_softmax`,
// w.r.t. the logits with log_probs = log_softmax(logits, 1): g·(softmax − target
// distribution), in one pass. grad_loss has the loss's shape.
Tensor nll_loss_backward(const Tensor& grad_loss, const Tensor& log_probs, const Tensor& target,
                         const CrossEntropyOptions& opts, bool through_log_softmax);

}  // namespace ddl

namespace ddl::kernels {

// x, y, grad_y, grad_x: the same shape, contiguous; dim already wrapped.
using SoftmaxForwardFn = void(const Tensor& x, int64_t dim, bool log, Tensor& y);
using SoftmaxBackwardFn = void(const Tensor& grad_y, const Tensor& y, int64_t dim, bool log, Tensor& grad_x);
// log_probs: [N, C, S]; target: int64 [N, S]; loss: [N, S] (Reduction::None) or [] (Mean, Sum).
// Throws naming `op` when a target is out of range.
using NllLossForwardFn = void(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opts,
                              const char* op, Tensor& loss);
// grad_loss: like loss; grad_input: [N, C, S]. Targets were validated by the
// forward: the CPU re-checks them, the CUDA kernel does not (that would sync the host).
using NllLossBackwardFn = void(const Tensor& grad_loss, const Tensor& log_probs, const Tensor& target,
                               const CrossEntropyOptions& opts, bool through_log_softmax, Tensor& grad_input);

DDL_DECLARE_KERNEL(softmax_forward_kernel, SoftmaxForwardFn);
DDL_DECLARE_KERNEL(softmax_backward_kernel, SoftmaxBackwardFn);
DDL_DECLARE_KERNEL(nll_loss_forward_kernel, NllLossForwardFn);
DDL_DECLARE_KERNEL(nll_loss_backward_kernel, NllLossBackwardFn);

}  // namespace ddl::kernels
