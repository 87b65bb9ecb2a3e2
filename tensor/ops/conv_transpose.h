// 2-D transposed convolution (torch.nn.functional.conv_transpose2d) on NCHW
// tensors. Its forward is conv2d's input gradient, so it reuses conv2d's device
// kernels (tensor/ops/conv.h); its gradients are conv2d's forward and weight
// gradient with the roles of input and output swapped. No 1-D/3-D variants.
#pragma once

#include <array>
#include <cstdint>

#include <ddl/tensor/ops/conv.h>

namespace ddl {

// Output extent of one spatial dim:
// (in - 1) * stride - 2 pad + dil (k - 1) + output_padding + 1.
int64_t conv_transpose_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                                int64_t output_padding);

// x: [N, Cin, H, W] (or [Cin, H, W]), w: [Cin, Cout/groups, R, S], bias: [Cout] or
// undefined -> y: [N, Cout, Hout, Wout]. p holds stride, padding, dilation and groups
// as for conv2d; output_padding (per dim) must be smaller than the stride or the
// dilation, as in PyTorch.
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p = {},
                        std::array<int64_t, 2> output_padding = {0, 0});

// The gradients of conv_transpose2d w.r.t. x (conv2d of grad_y with w) and w
// (conv2d's weight gradient with x as the output gradient); the bias gradient is
// conv2d_backward_bias(grad_y).
Tensor conv_transpose2d_backward_input(const Tensor& grad_y, const Tensor& w, const Shape& x_shape,
                                       const Conv2dParams& p);
Tensor conv_transpose2d_backward_weight(const Tensor& x, const Tensor& grad_y, const Shape& w_shape,
                                        const Conv2dParams& p, std::array<int64_t, 2> output_padding);

}  // namespace ddl
