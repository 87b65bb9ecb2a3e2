// Differentiable 2-D resizing (torch.nn.functional.interpolate for 4-D input,
// modes nearest and bilinear); forward and backward in upsample.cpp, kernels in
// tensor/ops/upsample.h. 3-D (1-D resize) and 5-D inputs are not handled.
#pragma once

#include <array>
#include <optional>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/upsample.h>

namespace ddl {

// Exactly one of size and scale_factor is set; output = size, or floor(in * scale).
struct InterpolateOptions {
  std::optional<std::array<int64_t, 2>> size;
  std::optional<std::array<double, 2>> scale_factor;
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = false;  // bilinear only
};

// x: [N, C, H, W] -> [N, C, H', W'].
Variable interpolate(const Variable& x, const InterpolateOptions& opts);

}  // namespace ddl
