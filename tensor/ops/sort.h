// Sorting along one dim: sort, argsort, topk, kthvalue, max_dim, min_dim, and
// the scatter that routes their gradient back. Values keep the input's dtype;
// indices are int64 (ValuesIndices, tensor.h). NaN sorts as the largest value,
// as in PyTorch. Bool and 16-bit floats sort as exact uint8/float32 copies; topk and
// kthvalue refuse bool, as PyTorch. A 0-d tensor takes dim 0 or -1. Runs on the CPU
// (tensor/cpu/sort.cpp) and CUDA (tensor/cuda/sort.cu), with identical results.
#pragma once

#include <cstdint>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

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
// added at indices[..., j, ...] along `dim`. grad and indices have one shape. Indices
// that repeat along `dim` (never from the ops above) are summed in any order on CUDA:
// for those, scatter_add gives the CPU's bits.
Tensor sort_backward(const Tensor& grad, const Tensor& indices, int64_t dim, const Shape& input_shape);

}  // namespace ddl

namespace ddl::kernels {

// x: [rows, n] contiguous, a dtype of DDL_DISPATCH_NUMERIC; values: [rows, k] of
// x's dtype; indices: int64 [rows, k]; 0 < k <= n. Writes the first k of each row
// sorted stably (ties keep index order, in both directions; NaN above every number).
using SortRowsFn = void(const Tensor& x, int64_t k, bool descending, Tensor& values, Tensor& indices);
// grad, indices: [rows, k] contiguous (grad float32/float64, indices int64);
// grad_x: [rows, n] contiguous zeros. grad_x[r, indices[r, j]] += grad[r, j].
// An index outside [0, n) throws (the CUDA kernel defers it to the next sync).
using SortBackwardFn = void(const Tensor& grad, const Tensor& indices, Tensor& grad_x);

DDL_DECLARE_KERNEL(sort_rows_kernel, SortRowsFn);
DDL_DECLARE_KERNEL(sort_backward_kernel, SortBackwardFn);

}  // namespace ddl::kernels
