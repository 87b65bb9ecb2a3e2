// Differentiable cat, stack, split and chunk on Variables (autograd/ops/join.cpp).
// The gradient of a joined result is cut back into pieces; split pieces are
// differentiable views (narrow) whose gradients add up in the input.
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl {

Variable cat(const std::vector<Variable>& xs, int64_t dim = 0);
Variable stack(const std::vector<Variable>& xs, int64_t dim = 0);
std::vector<Variable> split(const Variable& x, int64_t split_size, int64_t dim = 0);
std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& split_sizes, int64_t dim = 0);
std::vector<Variable> chunk(const Variable& x, int64_t chunks, int64_t dim = 0);

}  // namespace ddl
