// Differentiable conv3d, conv_transpose1d and conv_transpose3d on Variables, as
// torch.nn.functional's (conv1d, conv2d and conv_transpose2d are in
// autograd/ops/conv.h). Composed of conv2d / conv_transpose2d over depth slices
// (conv_nd.cpp): correct on every device conv2d runs on, not fast.
#pragma once

#include <cstdint>

#include <ddl/autograd/ops/expanding_array.h>
#include <ddl/autograd/variable.h>

namespace ddl {

// x: [N, C, D, H, W] or [C, D, H, W], w: [K, C / groups, kd, kh, kw], bias: [K] or undefined
// -> [N, K, Do, Ho, Wo] with Do = floor((D + 2 pad - dil (kd - 1) - 1) / stride) + 1.
Variable conv3d(const Variable& x, const Variable& w, const Variable& bias, ExpandingArray<3> stride = 1,
                ExpandingArray<3> padding = 0, ExpandingArray<3> dilation = 1, int64_t groups = 1);

// PyTorch's argument order: stride, padding, output_padding, groups, dilation. output_padding
// must be smaller than the stride or the dilation. x: [N, Cin, L] or [Cin, L],
// w: [Cin, Cout / groups, k] -> [N, Cout, (L - 1) stride - 2 pad + dil (k - 1) + output_padding + 1].
Variable conv_transpose1d(const Variable& x, const Variable& w, const Variable& bias, int64_t stride = 1,
                          int64_t padding = 0, int64_t output_padding = 0, int64_t groups = 1, int64_t dilation = 1);
// x: [N, Cin, D, H, W] or [Cin, D, H, W], w: [Cin, Cout / groups, kd, kh, kw].
Variable conv_transpose3d(const Variable& x, const Variable& w, const Variable& bias, ExpandingArray<3> stride = 1,
                          ExpandingArray<3> padding = 0, ExpandingArray<3> output_padding = 0, int64_t groups = 1,
                          ExpandingArray<3> dilation = 1);

}  // namespace ddl
