// Winograd F(2x2, 3x3) for float32 3x3 stride-1 convolutions on the CPU:
// forward, input gradient and weight gradient (see Note [Winograd F(2x2, 3x3)]
// in winograd.cpp). Internal to tensor/cpu/; conv2d.cpp decides when to use it.
#pragma once

#include <cstdint>

namespace ddl::cpu::winograd {

// y [N, O, P, Q] = x [N, I, H, W] convolved with a 3x3 kernel, stride 1, zero
// padding ph, pw <= 2 (so P = H + 2 ph - 2).
struct Geom {
  int64_t N, I, H, W, O, P, Q, ph, pw;
};

// Whether none of p[0, n) is an inf or a NaN; operands that are not take im2col
// (Note [Winograd and non-finite values] in winograd.cpp).
bool all_finite(const float* p, int64_t n);

// U [16, O, I] = the transform of w [O, I, 3, 3].
void transform_weights(const float* w, int64_t O, int64_t I, float* U);

// y = conv(x, w) + bias (bias [O] or null), with U = transform_weights(w).
// flipped: U is the transform of a weight [g.I, g.O, 3, 3] and the kernel to
// apply is that weight with its channel dims swapped and rotated 180 degrees,
// which makes y the input gradient of that weight's conv.
void conv(const Geom& g, const float* x, const float* U, bool flipped, const float* bias, float* y);

// gw [O, I, 3, 3] = the gradient of y = conv(x, w) with respect to w, given gy [N, O, P, Q].
void weight_grad(const Geom& g, const float* x, const float* gy, float* gw);

}  // namespace ddl::cpu::winograd
