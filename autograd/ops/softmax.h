// Differentiable softmax and log_softmax along one dim (forward and backward in softmax.cpp).
#pragma once

#include <ddl/autograd/variable.h>

namespace ddl {

Variable softmax(const Variable& x, int64_t dim);
Variable log_softmax(const Variable& x, int64_t dim);

}  // namespace ddl
