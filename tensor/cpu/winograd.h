// Winograd F(2x2, 3x3) and F(4x4, 3x3) for float32 3x3 stride-1 convolutions on the
// CPU: forward, input gradient and weight gradient (see Note [Winograd F(2x2, 3x3)]
// in winograd.cpp). Internal to tensor/cpu/; conv2d.cpp decides when to use Winograd,
// tile_size() which tile.
#pragma once

#include <cstdint>

namespace ddl::cpu::winograd {

// y [N, O, P, Q] = x [N, I, H, W] convolved with a 3x3 kernel, stride 1, zero
// padding ph, pw <= 2 (so P = H + 2 ph - 2).
struct Geom {
  int64_t N, I, H, W, O, P, Q, ph, pw;
};

// Which algorithm conv2d.cpp may use: the shape rule, or one forced by set_mode or
// DDL_WINOGRAD=auto|2|4|off (comparisons and tests; read once).
enum class Mode { automatic, f2, f4, off };
Mode mode();
void set_mode(Mode m);
// The output tile side, 2 or 4, that g's convolutions take (Note [Winograd tile size]).
int tile_size(const Geom& g);

// Each returns false, its output then unspecified, when an operand holds an inf or a NaN:
// the caller computes without Winograd (Note [Winograd and non-finite values] in winograd.cpp).
// y = conv(x, w) + bias, w [O, I, 3, 3], bias [O] or null.
bool forward(const Geom& g, const float* x, const float* w, const float* bias, float* y);
// gx [N, I, H, W] = the gradient of y = conv(x, w) with respect to x, given gy [N, O, P, Q].
bool input_grad(const Geom& g, const float* gy, const float* w, float* gx);
// gw [O, I, 3, 3] = the gradient of y = conv(x, w) with respect to w, given gy [N, O, P, Q].
bool weight_grad(const Geom& g, const float* x, const float* gy, float* gw);

}  // namespace ddl::cpu::winograd
