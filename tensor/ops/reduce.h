// Reductions over any set of dims (empty dims = all), with keepdim.
// Float sums accumulate in fixed-size blocks combined in a fixed order, so the
// result is bitwise the same for any thread count.
#pragma once

#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

// A 0-d tensor takes dim 0 or -1 (once) as if it had one dim of size 1, as in PyTorch.
// Bool and integer sums accumulate in and return int64, as torch.sum.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Floating-point tensors only: torch.mean refuses integers ("could not infer output dtype").
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Variance with Bessel's correction by default (correction = 1), as torch.var; floating
// point only. Two passes in float64, rounded once (Note [Variance in float64]).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
// Keep x's dtype, bool included; a NaN in a row makes its result NaN.
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Index (int64) of the first maximum along `dim` (of the first NaN, if any); refuses bool, as PyTorch.
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
// Sums a broadcast result back to `shape` (the reverse of expand), for gradients.
Tensor sum_to(const Tensor& x, const Shape& shape);

}  // namespace ddl
