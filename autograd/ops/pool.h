// Differentiable max and average pooling on Variables (forward and backward
// in pool.cpp). Parameters as in tensor/pool.h.
#pragma once

#include <cstdint>

#include "autograd/variable.h"
#include "tensor/pool.h"

namespace ddl {

Variable max_pool2d(const Variable& x, const Pool2dParams& p);
Variable avg_pool2d(const Variable& x, const Pool2dParams& p);
// Square window `kernel`, stride `stride` (defaults to kernel), no padding.
Variable max_pool2d(const Variable& x, int64_t kernel, int64_t stride = 0);
Variable avg_pool2d(const Variable& x, int64_t kernel, int64_t stride = 0);

}  // namespace ddl
