// 2-D upsampling / resizing of NCHW tensors, as torch.nn.functional.interpolate
// in modes "nearest" and "bilinear" (align_corners false or true), with the
// gradients. Source coordinates follow PyTorch 1.13's CPU kernels exactly,
// including its use of 1/scale_factor (not in/out) when a scale was given.
// No bicubic, area, or nearest-exact modes. CPU and CUDA kernels
// (tensor/cpu/upsample.cpp, tensor/cuda/upsample.cu), bit-identical results.
#pragma once

#include <array>
#include <cstdint>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

enum class InterpolateMode { Nearest, Bilinear };

struct Upsample2dParams {
  std::array<int64_t, 2> output_size{0, 0};
  // The scale factors the output size came from, or 0 when a size was given.
  std::array<double, 2> scales{0.0, 0.0};
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = false;  // bilinear only
};

// floor(in * scale), as PyTorch computes an output size from a scale factor.
int64_t upsample_out_size(int64_t in, double scale);

// x: [N, C, H, W] or [C, H, W] -> [N, C, output_size[0], output_size[1]].
Tensor upsample2d(const Tensor& x, const Upsample2dParams& p);
Tensor upsample2d_backward(const Tensor& grad_y, const Shape& x_shape, const Upsample2dParams& p);

namespace kernels {
// Contiguous 4-D tensors, outputs preallocated, shapes validated by the frontend.
using Upsample2dForwardFn = void(const Tensor& x, const Tensor& y, const Upsample2dParams& p);
using Upsample2dBackwardFn = void(const Tensor& grad_y, const Tensor& grad_x, const Upsample2dParams& p);
DDL_DECLARE_KERNEL(upsample2d_forward_kernel, Upsample2dForwardFn);
DDL_DECLARE_KERNEL(upsample2d_backward_kernel, Upsample2dBackwardFn);
}  // namespace kernels

}  // namespace ddl
