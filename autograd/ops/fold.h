// im2col and col2im on Variables, as torch.nn.functional.unfold and fold (4-D inputs:
// sliding blocks of images). Compositions of pad, strided slices, stack and reshape, so
// the gradient of each is the other and double backward comes with them (fold.cpp).
#pragma once

#include <array>

#include <ddl/autograd/variable.h>

namespace ddl {

// x: [N, C, H, W] or unbatched [C, H, W], floating, C, H, W > 0. Returns
// [N, C * kh * kw, L], L = oh * ow blocks, oh = (H + 2 ph - dh (kh - 1) - 1) / sh + 1
// (ow likewise), which must be positive; row c * kh * kw + i * kw + j holds each block's
// element (i, j) of channel c. kernel, dilation, stride > 0, padding >= 0.
Variable unfold(const Variable& x, std::array<int64_t, 2> kernel_size, std::array<int64_t, 2> dilation = {1, 1},
                std::array<int64_t, 2> padding = {0, 0}, std::array<int64_t, 2> stride = {1, 1});

// The adjoint of unfold: x [N, C * kh * kw, L] (or unbatched [C * kh * kw, L]) with L the
// number of blocks unfold makes of an output_size image; returns [N, C, H, W], each
// block's values summed into the positions it covers.
Variable fold(const Variable& x, std::array<int64_t, 2> output_size, std::array<int64_t, 2> kernel_size,
              std::array<int64_t, 2> dilation = {1, 1}, std::array<int64_t, 2> padding = {0, 0},
              std::array<int64_t, 2> stride = {1, 1});

}  // namespace ddl
