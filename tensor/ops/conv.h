// 2-D convolution (cross-correlation, as torch.nn.functional.conv2d) and its
// two gradients, on NCHW tensors. Bias gradient is a plain sum (see
// conv2d_backward_bias). No transposed convolution and no 1-D/3-D variants.
#pragma once

#include <array>
#include <cstdint>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
};

// Output extent of one spatial dim: floor((in + 2 pad - dil (k - 1) - 1) / stride) + 1.
int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation);

// x: [N, C, H, W] (or unbatched [C, H, W]), w: [K, C/groups, R, S], bias: [K] or
// undefined -> y: [N, K, P, Q] (or [K, P, Q]). Same dtype and device for all: a float,
// or an integer on the CPU (exact sums, wrapping on overflow, as PyTorch).
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p = {});
// Gradient w.r.t. x of a conv2d whose input had shape x_shape.
Tensor conv2d_backward_input(const Tensor& grad_y, const Tensor& w, const Shape& x_shape, const Conv2dParams& p);
// Gradient w.r.t. the weight of shape w_shape.
Tensor conv2d_backward_weight(const Tensor& grad_y, const Tensor& x, const Shape& w_shape, const Conv2dParams& p);
// Gradient w.r.t. the bias: grad_y summed over N, P, Q -> [K].
Tensor conv2d_backward_bias(const Tensor& grad_y);

namespace detail {
// Throws a ddl::Error naming op unless t's dtype is a float, or an integer on the CPU.
void check_conv_dtype(const Tensor& t, const char* op);
}  // namespace detail

namespace kernels {
// All tensors contiguous, 4-D, same dtype (float32, float64, a 16-bit float, or an integer
// on the CPU); outputs preallocated.
// bias may be undefined. Shapes already validated by the frontend.
using Conv2dForwardFn = void(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                             const Conv2dParams& p);
using Conv2dBackwardInputFn = void(const Tensor& grad_y, const Tensor& w, const Tensor& grad_x, const Conv2dParams& p);
using Conv2dBackwardWeightFn = void(const Tensor& grad_y, const Tensor& x, const Tensor& grad_w, const Conv2dParams& p);
DDL_DECLARE_KERNEL(conv2d_forward_kernel, Conv2dForwardFn);
DDL_DECLARE_KERNEL(conv2d_backward_input_kernel, Conv2dBackwardInputFn);
DDL_DECLARE_KERNEL(conv2d_backward_weight_kernel, Conv2dBackwardWeightFn);
}  // namespace kernels

}  // namespace ddl
