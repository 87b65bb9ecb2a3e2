// Differentiable einsum on Variables: the algorithm of tensor/ops/einsum_impl.h
// run on differentiable permute/reshape/mul/sum/matmul, so backward is theirs.
#pragma once

#include <string>
#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl {

// As einsum(equation, tensors) in tensor/ops/einsum.h (same subscripts, same limits).
Variable einsum(const std::string& equation, const std::vector<Variable>& operands);

}  // namespace ddl
