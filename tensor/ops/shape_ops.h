// Copies that rearrange a tensor's elements: repeat (tile), flip (reverse
// dims) and pad (constant, reflect or replicate borders), as in PyTorch.
// Not here: views (tensor.h) and differentiable forms (autograd/ops/shape_ops.h).
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

// Tiles t sizes[i] times along dim i; sizes may have more entries than t has
// dims (t is then viewed with leading 1s), as torch.Tensor.repeat.
Tensor repeat(const Tensor& t, const std::vector<int64_t>& sizes);
// Reverses the order of elements along each of `dims` (a copy, on any device).
Tensor flip(const Tensor& t, const std::vector<int64_t>& dims);

enum class PadMode { Constant, Reflect, Replicate };
// pads = {last_before, last_after, second_last_before, ...}, as torch.nn.functional.pad:
// 2k entries pad the last k dims. Constant pads may be negative (they crop);
// Reflect needs pads < size (the edge is not repeated), Replicate repeats the edge;
// both take negative pads (crops) and need the dim non-empty before and after, as F.pad.
// Every mode runs on any device (Reflect and Replicate gather with positions built here).
Tensor pad(const Tensor& t, const std::vector<int64_t>& pads, PadMode mode = PadMode::Constant, double value = 0.0);

namespace detail {
// For reflect/replicate: the source position (int64 [before + n + after]) of each
// output position along a dim of size n.
Tensor pad_source_positions(int64_t n, int64_t before, int64_t after, PadMode mode);
// Checks pads against t's shape; returns the padded shape.
Shape padded_shape(const Tensor& t, const std::vector<int64_t>& pads, PadMode mode);
}  // namespace detail

}  // namespace ddl
