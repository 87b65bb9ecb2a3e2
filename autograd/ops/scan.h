// Differentiable cumsum on Variables (forward and backward in scan.cpp).
#pragma once

#include <ddl/autograd/variable.h>

namespace ddl {

// The gradient is the reversed cumulative sum of the output gradient.
Variable cumsum(const Variable& x, int64_t dim);

}  // namespace ddl
