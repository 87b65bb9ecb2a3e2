// Kernel slot of the reductions (see Note [Kernel dispatch]).
#pragma once

#include "tensor/dispatch.h"
#include "tensor/tensor.h"

namespace ddl::kernels {

enum class ReduceOp : uint8_t { Sum, Max, Min, ArgMax, ArgMin };

// in: contiguous [outer, inner]; out: contiguous [outer] (int64 for Arg*, else in's dtype).
// Reduces each row of `inner` elements.
using ReduceFnPtr = void(ReduceOp op, const Tensor& out, const Tensor& in, int64_t outer, int64_t inner);
DDL_DECLARE_KERNEL(reduce_kernel, ReduceFnPtr);

}  // namespace ddl::kernels
