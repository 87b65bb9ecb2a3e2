// Differentiable layer and group normalisation (forward and backward in layer_norm.cpp).
// Both normalise over trailing dims with the biased variance, as PyTorch does; they keep
// no running statistics (so train and eval agree). BatchNorm is in norm.h.
#pragma once

#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl {

// y = (x - mean) / sqrt(var + eps) over the last `num_dims` dims of x, one mean and
// variance per leading index. One fused node: it saves the normalised x and 1/std.
Variable normalize_trailing(const Variable& x, int64_t num_dims, double eps);

// x: [*, normalized_shape]; weight, bias: normalized_shape or undefined (no affine).
Variable layer_norm(const Variable& x, const Shape& normalized_shape, const Variable& weight, const Variable& bias,
                    double eps = 1e-5);

// x: [N, C, *] with C divisible by num_groups; statistics per (sample, group);
// weight, bias: [C] or undefined.
Variable group_norm(const Variable& x, int64_t num_groups, const Variable& weight, const Variable& bias,
                    double eps = 1e-5);

}  // namespace ddl
