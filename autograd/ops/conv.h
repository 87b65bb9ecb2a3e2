// Differentiable conv2d on Variables (forward and backward in conv.cpp).
// Shapes and parameters as ddl::conv2d in tensor/conv.h.
#pragma once

#include "autograd/variable.h"
#include "tensor/conv.h"

namespace ddl {

// x: [N, C, H, W], w: [K, C/groups, R, S], bias: [K] or an undefined Variable.
Variable conv2d(const Variable& x, const Variable& w, const Variable& bias, const Conv2dParams& p = {});

}  // namespace ddl
