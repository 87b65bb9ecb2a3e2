// Differentiable 1-D and 3-D pooling, LP pooling and max unpooling on
// Variables, as torch.nn.functional's (the 2-D forms are in autograd/ops/pool.h).
// Composed of differentiable ops (pool_nd.cpp): correct on any device, not fast.
// Inputs are [N, C, *spatial] or unbatched [C, *spatial]. A stride of 0 means the
// kernel size (PyTorch's stride=None). No divisor_override, no fractional pooling.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <ddl/autograd/ops/expanding_array.h>
#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/pool.h>

namespace ddl {

// Max pooling: padding counts as -inf and must be at most half the kernel; the first maximum in
// the window's row-major order wins, and only it gets the gradient. Indices are int64 positions
// within each input volume (d * H * W + h * W + w), as max_unpool*d takes them.
Variable max_pool1d(const Variable& x, int64_t kernel, int64_t stride = 0, int64_t padding = 0, int64_t dilation = 1,
                    bool ceil_mode = false);
std::pair<Variable, Tensor> max_pool1d_with_indices(const Variable& x, int64_t kernel, int64_t stride = 0,
                                                    int64_t padding = 0, int64_t dilation = 1, bool ceil_mode = false);
Variable max_pool3d(const Variable& x, ExpandingArray<3> kernel, ExpandingArray<3> stride = 0,
                    ExpandingArray<3> padding = 0, ExpandingArray<3> dilation = 1, bool ceil_mode = false);
std::pair<Variable, Tensor> max_pool3d_with_indices(const Variable& x, ExpandingArray<3> kernel,
                                                    ExpandingArray<3> stride = 0, ExpandingArray<3> padding = 0,
                                                    ExpandingArray<3> dilation = 1, bool ceil_mode = false);

// max_pool2d (autograd/ops/pool.h) with the indices max_unpool2d takes.
std::pair<Variable, Tensor> max_pool2d_with_indices(const Variable& x, const Pool2dParams& p);

// Average pooling: padding counts as zeros, and in the divisor when count_include_pad. Floats, or
// int64 (the sum divided with truncation, as PyTorch's CPU kernel; no gradient).
Variable avg_pool1d(const Variable& x, int64_t kernel, int64_t stride = 0, int64_t padding = 0, bool ceil_mode = false,
                    bool count_include_pad = true);
Variable avg_pool3d(const Variable& x, ExpandingArray<3> kernel, ExpandingArray<3> stride = 0,
                    ExpandingArray<3> padding = 0, bool ceil_mode = false, bool count_include_pad = true);

// Adaptive pooling: output cell i covers [floor(i L / out), ceil((i + 1) L / out)) along each dim.
// output_size entries >= 0.
Variable adaptive_avg_pool1d(const Variable& x, int64_t output_size);
Variable adaptive_avg_pool3d(const Variable& x, ExpandingArray<3> output_size);
Variable adaptive_max_pool1d(const Variable& x, int64_t output_size);
Variable adaptive_max_pool3d(const Variable& x, ExpandingArray<3> output_size);
std::pair<Variable, Tensor> adaptive_max_pool1d_with_indices(const Variable& x, int64_t output_size);
std::pair<Variable, Tensor> adaptive_max_pool3d_with_indices(const Variable& x, ExpandingArray<3> output_size);

// Power-average pooling: (sum over the window of x^p)^(1/p), as PyTorch computes it (an average
// pool of x^p times the window size; no padding).
Variable lp_pool1d(const Variable& x, double norm_type, int64_t kernel, int64_t stride = 0, bool ceil_mode = false);
Variable lp_pool2d(const Variable& x, double norm_type, ExpandingArray<2> kernel, ExpandingArray<2> stride = 0,
                   bool ceil_mode = false);

// The inverse of max pooling: x's values placed at `indices` (from max_pool*d_with_indices, the
// same shape as x) in a zero volume. Its size is (in - 1) * stride - 2 * padding + kernel per dim
// unless output_size (the spatial sizes, or with N and C in front) says otherwise; it must then lie
// strictly within a stride of that default, as PyTorch requires.
Variable max_unpool1d(const Variable& x, const Tensor& indices, int64_t kernel, int64_t stride = 0, int64_t padding = 0,
                      std::optional<std::vector<int64_t>> output_size = std::nullopt);
Variable max_unpool2d(const Variable& x, const Tensor& indices, ExpandingArray<2> kernel, ExpandingArray<2> stride = 0,
                      ExpandingArray<2> padding = 0, std::optional<std::vector<int64_t>> output_size = std::nullopt);
Variable max_unpool3d(const Variable& x, const Tensor& indices, ExpandingArray<3> kernel, ExpandingArray<3> stride = 0,
                      ExpandingArray<3> padding = 0, std::optional<std::vector<int64_t>> output_size = std::nullopt);

}  // namespace ddl
