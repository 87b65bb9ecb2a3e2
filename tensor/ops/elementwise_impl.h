// The elementwise frontends' machinery (tensor/ops/elementwise.cpp), for the ops of tensor/ops/math_ops.cpp:
// broadcasting, dtype promotion (Note [0-d operands], Note [Scalar operands]) and 16-bit handling
// done once. Not a public API.
#pragma once

#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/kernels/functors.h>

namespace ddl::detail {

// op on x; integer and bool x compute in float32 unless op keeps integers. name: the op the user called.
Tensor unary_op(UnaryOp op, const Tensor& x, const char* name, double a = 0, double b = 0);
// op on a and b broadcast, in their promoted dtype (16-bit floats through float32).
Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, const char* name);
// torch.result_type of two tensors and of a tensor and a Python number.
DType result_type(const Tensor& a, const Tensor& b);
DType scalar_result_type(DType t, double v);

}  // namespace ddl::detail
