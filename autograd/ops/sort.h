// Differentiable sort, topk, kthvalue, max_dim and min_dim on Variables. The
// values carry the gradient, which flows back to the input element each came
// from; the indices are plain int64 tensors.
#pragma once

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/sort.h>

namespace ddl {

ValuesIndices<Variable> sort(const Variable& x, int64_t dim = -1, bool descending = false, bool stable = false);
Tensor argsort(const Variable& x, int64_t dim = -1, bool descending = false, bool stable = false);
ValuesIndices<Variable> topk(const Variable& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
ValuesIndices<Variable> kthvalue(const Variable& x, int64_t k, int64_t dim = -1, bool keepdim = false);
// As torch.max(x, dim): the gradient goes to the returned index only (ties are not split).
ValuesIndices<Variable> max_dim(const Variable& x, int64_t dim, bool keepdim = false);
ValuesIndices<Variable> min_dim(const Variable& x, int64_t dim, bool keepdim = false);

}  // namespace ddl
