// Differentiable reductions and matrix products on Variables.
#pragma once

#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl {

// Sums x down to `shape` (the inverse of broadcasting x from shape), as ddl::sum_to on tensors.
Variable sum_to(const Variable& x, const Shape& shape);
Variable sum(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Variable mean(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Variable var(const Variable& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
// Gradient flows to the maximal elements, split evenly between ties (as torch.amax),
// or to the NaNs when a row holds any (as torch.max()). x.max() and x.min() are these
// over every dim.
Variable amax(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Variable amin(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);

Variable matmul(const Variable& a, const Variable& b);
// y = x W^T + b; bias may be undefined.
Variable linear(const Variable& x, const Variable& weight, const Variable& bias);

}  // namespace ddl
