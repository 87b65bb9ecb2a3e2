// Differentiable pooling on Variables (forward and backward in pool.cpp):
// max and average pooling (tensor/ops/pool.h) and their adaptive forms
// (tensor/ops/adaptive_pool.h).
#pragma once

#include <array>
#include <cstdint>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/adaptive_pool.h>
#include <ddl/tensor/ops/pool.h>

namespace ddl {

Variable max_pool2d(const Variable& x, const Pool2dParams& p);
Variable avg_pool2d(const Variable& x, const Pool2dParams& p);
// Square window `kernel`, stride `stride` (defaults to kernel), no padding.
Variable max_pool2d(const Variable& x, int64_t kernel, int64_t stride = 0);
Variable avg_pool2d(const Variable& x, int64_t kernel, int64_t stride = 0);

// Any input size to output_size; x: [N, C, H, W] or [C, H, W].
Variable adaptive_avg_pool2d(const Variable& x, std::array<int64_t, 2> output_size);
Variable adaptive_max_pool2d(const Variable& x, std::array<int64_t, 2> output_size);
// The max and its int64 indices h * W + w within each input plane (no gradient).
std::pair<Variable, Tensor> adaptive_max_pool2d_with_indices(const Variable& x, std::array<int64_t, 2> output_size);

}  // namespace ddl
