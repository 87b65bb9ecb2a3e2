// Sorting along one dim: sort, argsort, topk, kthvalue, max_dim, min_dim, and
// the scatter that routes their gradient back. Values keep the input's dtype;
// indices are int64 (ValuesIndices, tensor.h). NaN sorts as the largest value,
// as in PyTorch. CPU only: a CUDA tensor is refused with an error.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace ddl {

// Sorts along `dim` (ascending unless `descending`). The sort is always stable
// (equal values keep their order), so `stable` only documents intent, as torch.sort.
ValuesIndices<Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
// The k largest (or smallest) along `dim`, best first. Ties go to the lower index;
// `sorted` = false still returns them sorted (PyTorch leaves that order unspecified).
ValuesIndices<Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// The k-th smallest (k counts from 1) along `dim`, and its index.
ValuesIndices<Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);

// The largest (smallest) value along `dim` and its index, as torch.max(x, dim):
// (amax, argmax). A free `max` would hide std::max and CUDA's max, hence the name.
ValuesIndices<Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices<Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim = false);

// Gradient of any of the above w.r.t. x: zeros of `input_shape` with grad[..., j, ...]
// added at indices[..., j, ...] along `dim`. grad and indices have one shape.
Tensor sort_backward(const Tensor& grad, const Tensor& indices, int64_t dim, const Shape& input_shape);

}  // namespace ddl
