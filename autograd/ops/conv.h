// Differentiable convolutions on Variables (forward and backward in conv.cpp):
// conv2d, conv1d (conv2d over a height-1 image) and conv_transpose2d.
// Shapes and parameters as in tensor/ops/conv.h and tensor/ops/conv_transpose.h.
#pragma once

#include <array>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/conv.h>
#include <ddl/tensor/ops/conv_transpose.h>

namespace ddl {

// x: [N, C, H, W], w: [K, C/groups, R, S], bias: [K] or an undefined Variable.
Variable conv2d(const Variable& x, const Variable& w, const Variable& bias, const Conv2dParams& p = {});

// x: [N, C, L] or [C, L], w: [K, C/groups, k], bias: [K] or undefined -> [N, K, Lout].
Variable conv1d(const Variable& x, const Variable& w, const Variable& bias, int64_t stride = 1, int64_t padding = 0,
                int64_t dilation = 1, int64_t groups = 1);

// x: [N, Cin, H, W], w: [Cin, Cout/groups, R, S], bias: [Cout] or undefined. As
// torch.nn.functional.conv_transpose2d; output_padding below the stride or the dilation.
Variable conv_transpose2d(const Variable& x, const Variable& w, const Variable& bias, const Conv2dParams& p = {},
                          std::array<int64_t, 2> output_padding = {0, 0});

}  // namespace ddl
