// 2-D max and average pooling on NCHW tensors (as torch.nn.functional's
// max_pool2d / avg_pool2d), with their gradients. Output sizes and ceil_mode
// follow PyTorch exactly. No adaptive pooling, no divisor_override.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

struct Pool2dParams {
  std::array<int64_t, 2> kernel{2, 2}, stride{2, 2}, padding{0, 0}, dilation{1, 1};
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d only
};

// PyTorch's pooling output extent; with ceil_mode the last window must still
// start inside the input or its left padding.
int64_t pool_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode);

// x: [N, C, H, W] or [C, H, W] -> (y, indices) of the output shape; indices are
// int64 positions h * W + w of each maximum within its input plane (first one on ties).
// Padding counts as -inf; padding must be at most half the kernel. Errors name `op`, the
// function the user called.
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const Pool2dParams& p,
                                                  const char* op = "max_pool2d_with_indices");
Tensor max_pool2d(const Tensor& x, const Pool2dParams& p);
// Scatters grad_y into a zero tensor of x_shape at `indices`, adding where outputs share an argmax.
Tensor max_pool2d_backward(const Tensor& grad_y, const Tensor& indices, const Shape& x_shape);
// The same for indices made by max_pool2d_with_indices(x, p) with x of x_shape: when p's
// windows cannot share an input, CUDA scatters without its deterministic sort.
Tensor max_pool2d_backward(const Tensor& grad_y, const Tensor& indices, const Shape& x_shape, const Pool2dParams& p);
// Whether every argmax max_pool2d_with_indices makes under p is in one window only. See Note [Disjoint pooling
// windows].
bool max_pool2d_windows_disjoint(const Pool2dParams& p);
// Mean over each window; padding counts in the divisor when count_include_pad. Needs dilation 1.
// Floats, or int64 on the CPU (the sum divided with truncation, as PyTorch).
Tensor avg_pool2d(const Tensor& x, const Pool2dParams& p);
Tensor avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape, const Pool2dParams& p);

namespace kernels {
// Contiguous 4-D tensors, outputs preallocated, shapes validated by the frontend. The
// max-pool kernels get float16/bfloat16 on CUDA only (the CPU's are widened first).
using MaxPool2dForwardFn = void(const Tensor& x, const Tensor& y, const Tensor& indices, const Pool2dParams& p);
// disjoint: no two outputs of a plane share an index (max_pool2d_windows_disjoint), so a plain scatter is exact.
using MaxPool2dBackwardFn = void(const Tensor& grad_y, const Tensor& indices, const Tensor& grad_x, bool disjoint);
using AvgPool2dForwardFn = void(const Tensor& x, const Tensor& y, const Pool2dParams& p);
using AvgPool2dBackwardFn = void(const Tensor& grad_y, const Tensor& grad_x, const Pool2dParams& p);
DDL_DECLARE_KERNEL(max_pool2d_forward_kernel, MaxPool2dForwardFn);
DDL_DECLARE_KERNEL(max_pool2d_backward_kernel, MaxPool2dBackwardFn);
DDL_DECLARE_KERNEL(avg_pool2d_forward_kernel, AvgPool2dForwardFn);
DDL_DECLARE_KERNEL(avg_pool2d_backward_kernel, AvgPool2dBackwardFn);
}  // namespace kernels

}  // namespace ddl
