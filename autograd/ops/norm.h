// Differentiable batch normalisation on Variables (forward and backward in norm.cpp).
// Running statistics are plain tensors updated in place, never differentiated.
#pragma once

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/norm.h>

namespace ddl {

// x: [N, C] or [N, C, *]; weight, bias: [C] Variables or undefined (no affine);
// running_mean, running_var: [C] or undefined. Semantics as ddl::batch_norm
// (tensor/ops/norm.h): batch stats when training (updating the running stats),
// running stats otherwise. Gradients flow to x, weight and bias. A float16 or
// bfloat16 x takes float32 weight, bias and running stats and returns x's dtype;
// autocast does not widen it (autograd/ops/norm.cpp).
Variable batch_norm(const Variable& x, const Variable& weight, const Variable& bias, Tensor running_mean,
                    Tensor running_var, bool training, double momentum = 0.1, double eps = 1e-5);

}  // namespace ddl
