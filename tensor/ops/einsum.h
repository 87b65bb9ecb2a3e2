// einsum: Einstein summation over labelled dims, as torch.einsum, for letter
// subscripts ('ij,jk->ik', 'bhqd,bhkd->bhqk', 'ii->i', implicit 'ij,jk').
// Operands are contracted pairwise, left to right, as (batched) matmuls.
// Not supported: ellipsis ('...') and broadcasting of size-1 dims (a label
// must have one size in every operand); both are refused with an error.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
// Braced lists of tensors, einsum("ij,jk->ik", {a, b}), pick this even where the
// Variable overload (autograd/ops/einsum.h) is visible.
Tensor einsum(const std::string& equation, std::initializer_list<Tensor> operands);

}  // namespace ddl
