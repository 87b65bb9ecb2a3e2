// Differentiable indexing on Variables (autograd/ops/indexing.cpp): x.index({...})
// with basic and advanced indices, index_put, index_select, index_add, gather,
// scatter, scatter_add and masked_fill. Index tensors and masks are plain
// tensors: no gradient flows into them. With repeated indices, scatter and
// non-accumulating index_put keep one write, and their gradient w.r.t. the
// written values is then as ill-defined as in PyTorch.
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/indexing.h>

namespace ddl {

Variable index(const Variable& x, const std::vector<TensorIndex>& indices);
// A copy of x with x[indices] = values (or += values when accumulate).
Variable index_put(const Variable& x, const std::vector<TensorIndex>& indices, const Variable& values,
                   bool accumulate = false);
Variable index_select(const Variable& x, int64_t dim, const Tensor& index);
Variable index_add(const Variable& x, int64_t dim, const Tensor& index, const Variable& source);
Variable gather(const Variable& x, int64_t dim, const Tensor& index);
Variable scatter(const Variable& self, int64_t dim, const Tensor& index, const Variable& src);
Variable scatter(const Variable& self, int64_t dim, const Tensor& index, double value);
Variable scatter_add(const Variable& self, int64_t dim, const Tensor& index, const Variable& src);
Variable masked_fill(const Variable& x, const Tensor& mask, double value);

}  // namespace ddl
