// Differentiable prod, std, logsumexp and norm (tensor/ops/reduce_more.h has the semantics), plus
// all / any / equal on Variables (no gradient: they return bools).
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/reduce_more.h>

namespace ddl {

// Gradient: the product of the other elements, also where x holds zeros (as PyTorch's
// prod_backward); differentiable again.
Variable prod(const Variable& x);
Variable prod(const Variable& x, int64_t dim, bool keepdim = false);
Variable std(const Variable& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
// Gradient g * exp(x - logsumexp(x)); integer inputs give a constant.
Variable logsumexp(const Variable& x, const std::vector<int64_t>& dims, bool keepdim = false);
// Gradients as torch.norm's: 0 where the norm is 0 (p = 2 and fractional p), split between
// ties for +-inf, zero for p = 0.
Variable norm(const Variable& x, double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor all(const Variable& x);
Tensor all(const Variable& x, int64_t dim, bool keepdim = false);
Tensor any(const Variable& x);
Tensor any(const Variable& x, int64_t dim, bool keepdim = false);
bool equal(const Variable& a, const Variable& b);

}  // namespace ddl
