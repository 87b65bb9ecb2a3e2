// Differentiable repeat, flip and pad on Variables (autograd/ops/shape_ops.cpp).
// expand is a Variable method (autograd/ops/view.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/shape_ops.h>

namespace ddl {

Variable repeat(const Variable& x, const std::vector<int64_t>& sizes);
Variable flip(const Variable& x, const std::vector<int64_t>& dims);
Variable pad(const Variable& x, const std::vector<int64_t>& pads, PadMode mode = PadMode::Constant, double value = 0.0);

}  // namespace ddl
