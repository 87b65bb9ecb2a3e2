// Connectionist temporal classification loss (Graves et al., ICML 2006) as torch.nn.functional.ctc_loss
// (PyTorch 1.13, CPU): the alpha/beta recursions in log space, on the host in float64.
#pragma once

#include <vector>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl {

// log_probs: [T, N, C] (or [T, C], one sequence) log-probabilities, float32 or float64; targets: int64,
// [N, S] padded or 1-d, the sequences concatenated (a [S] target for [T, C]); input_lengths[n] <= T and
// target_lengths[n] per sequence. Mean divides each loss by its target length (at least 1), then averages.
// zero_infinity: an impossible alignment (infinite loss) gives loss 0 and gradient 0. As PyTorch, the
// gradient is the one through log_softmax: exp(lp) − (posterior of each class), i.e. log_probs are taken
// to be log_softmax outputs (PyTorch documents its inputs so).
Variable ctc_loss(const Variable& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                  const std::vector<int64_t>& target_lengths, int64_t blank = 0, Reduction reduction = Reduction::Mean,
                  bool zero_infinity = false);

}  // namespace ddl
