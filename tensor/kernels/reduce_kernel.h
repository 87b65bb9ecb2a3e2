// Kernel slot of the reductions (see Note [Kernel dispatch]).
#pragma once

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::kernels {

enum class ReduceOp : uint8_t { Sum, Max, Min, ArgMax, ArgMin };

// in: contiguous [outer, inner]; out: contiguous [outer] (int64 for Arg*, else in's dtype).
// Reduces each row of `inner` elements.
using ReduceFnPtr = void(ReduceOp op, const Tensor& out, const Tensor& in, int64_t outer, int64_t inner);
DDL_DECLARE_KERNEL(reduce_kernel, ReduceFnPtr);

// in: contiguous [A, C, B]; out: contiguous [C] = sum over a and b. Sums the kept
// middle dims in place, without first moving the reduced dims last (bias gradients
// of [N, C, H, W] tensors, batch statistics).
using SumMiddleFnPtr = void(const Tensor& out, const Tensor& in, int64_t A, int64_t C, int64_t B);
DDL_DECLARE_KERNEL(sum_middle_kernel, SumMiddleFnPtr);

}  // namespace ddl::kernels
