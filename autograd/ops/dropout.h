// Differentiable inverted dropout (forward and backward in dropout.cpp).
#pragma once

#include <ddl/autograd/variable.h>
#include <ddl/tensor/core/random.h>

namespace ddl {

// Zeroes each element with probability p and scales the rest by 1 / (1 − p),
// with the mask drawn from `gen` (same generator state, same mask). Returns x
// itself when p == 0 or !training, and zeros when p == 1. p in [0, 1].
Variable dropout(const Variable& x, double p, bool training, Generator& gen);

}  // namespace ddl
