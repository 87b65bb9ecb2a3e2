// Differentiable losses (forward and backward in loss.cpp): cross_entropy and
// nll_loss over class-index targets, and mse_loss. Targets are plain tensors.
#pragma once

#include "autograd/variable.h"
#include "tensor/softmax.h"

namespace ddl {

// logits: [N, C] or [N, C, d1, ...]; target: int64 [N] or [N, d1, ...]. As
// torch.nn.functional.cross_entropy with ignore_index and label_smoothing
// (see ddl::cross_entropy in tensor/softmax.h). The backward is one fused pass.
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& opts = {});
// log_probs as produced by log_softmax(x, 1); same target rules.
Variable nll_loss(const Variable& log_probs, const Tensor& target, Reduction reduction = Reduction::Mean,
                  int64_t ignore_index = -100);
// (a − b)², reduced. a and b must have the same shape.
Variable mse_loss(const Variable& a, const Variable& b, Reduction reduction = Reduction::Mean);

}  // namespace ddl
