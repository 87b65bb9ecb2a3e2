// relu(batch_norm(x)) on Variables as one node, for nn::Sequential's fusion of a
// BatchNorm followed by a ReLU (nn/layers.cpp). Internal, not a public op.
#pragma once

#include <ddl/autograd/variable.h>

namespace ddl::detail {

// Exactly relu(batch_norm(x, weight, bias, running_mean, running_var, training, momentum,
// eps)) (autograd/ops/norm.h), the same values, gradients and running-stat updates. A
// float32/float64 CPU x runs the fused kernels, whose backward keeps x and y only;
// other inputs run the two ops.
Variable batch_norm_relu(const Variable& x, const Variable& weight, const Variable& bias, Tensor running_mean,
                         Tensor running_var, bool training, double momentum = 0.1, double eps = 1e-5);

}  // namespace ddl::detail
