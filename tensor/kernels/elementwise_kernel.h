// Kernel slots of the elementwise ops (see Note [Kernel dispatch]).
#pragma once

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/kernels/functors.h>

namespace ddl::kernels {

// out and in share a shape (any strides) and dtype.
using UnaryFnPtr = void(UnaryOp op, const Tensor& out, const Tensor& in, double a, double b);
DDL_DECLARE_KERNEL(unary_kernel, UnaryFnPtr);
// a and b are expanded to out's shape and share a numeric dtype (bools arrive as uint8);
// out has that dtype, or bool for comparisons.
using BinaryFnPtr = void(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha);
DDL_DECLARE_KERNEL(binary_kernel, BinaryFnPtr);
// out = cond ? a : b; cond bool, all expanded to out's shape.
using WhereFnPtr = void(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
DDL_DECLARE_KERNEL(where_kernel, WhereFnPtr);

}  // namespace ddl::kernels
