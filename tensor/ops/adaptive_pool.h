// Adaptive 2-D average and max pooling (torch.nn.functional's
// adaptive_avg_pool2d / adaptive_max_pool2d): any input size to any output
// size, output cell i covering rows [floor(i H / out), ceil((i + 1) H / out)).
// CPU and CUDA kernels (tensor/cpu/adaptive_pool.cpp, tensor/cuda/adaptive_pool.cu).
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/kernels/host_device.h>

namespace ddl {

// The window of output cell i along a dim of input extent `in` and output extent `out`.
// Shared by the CPU and CUDA kernels.
DDL_HOST_DEVICE int64_t adaptive_start(int64_t i, int64_t in, int64_t out) { return i * in / out; }
DDL_HOST_DEVICE int64_t adaptive_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

// x: [N, C, H, W] or [C, H, W] with H, W >= 1; output_size entries >= 1.
Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> output_size);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape);
// (y, indices): indices are int64 positions h * W + w within each input plane,
// the first maximum of the window (NaN counts as the maximum, as in PyTorch).
// The gradient is max_pool2d_backward(grad_y, indices, x_shape) (tensor/ops/pool.h).
std::pair<Tensor, Tensor> adaptive_max_pool2d(const Tensor& x, std::array<int64_t, 2> output_size,
                                              const char* op = "adaptive_max_pool2d");  // errors name op

namespace kernels {
// Contiguous 4-D tensors, outputs preallocated, shapes validated by the frontend.
using AdaptiveAvgPool2dForwardFn = void(const Tensor& x, const Tensor& y);
using AdaptiveAvgPool2dBackwardFn = void(const Tensor& grad_y, const Tensor& grad_x);
using AdaptiveMaxPool2dForwardFn = void(const Tensor& x, const Tensor& y, const Tensor& indices);
DDL_DECLARE_KERNEL(adaptive_avg_pool2d_forward_kernel, AdaptiveAvgPool2dForwardFn);
DDL_DECLARE_KERNEL(adaptive_avg_pool2d_backward_kernel, AdaptiveAvgPool2dBackwardFn);
DDL_DECLARE_KERNEL(adaptive_max_pool2d_forward_kernel, AdaptiveMaxPool2dForwardFn);
}  // namespace kernels

}  // namespace ddl
