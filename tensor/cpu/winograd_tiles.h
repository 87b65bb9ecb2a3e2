#pragma once
// The per-tile arithmetic of the Winograd convolutions (winograd.cpp), once per
// instruction-set level (cpu_level.h): the same source (winograd_tiles.inc) compiled
// with each level's flags, so the 16-channel vectors become one zmm, two ymm or four
// xmm. Raw pointers only: the level files use no shared inline code (sgemm_levels.h).
// Layouts as in Note [Winograd F(2x2, 3x3)]: staged images [rows][cols][Cp] with
// Cp = channels rounded up to 16; V, M, dM [16][T][channels]; dU [16][O][I].
// The weights' transform is weights_packed below (Note [Winograd weights packed once]).
#include <cstdint>

namespace ddl::cpu::isa {

struct WinogradTiles {
  // V [16][T][C] = B^T d B for the TP x TQ tiles of one staged image (row length Wp),
  // written from tile index tile0 on.
  void (*input)(const float* staged, int64_t C, int64_t Wp, int64_t TP, int64_t TQ, int64_t tile0, int64_t T, float* V);
  // staged output [2TP][Qp][Op] = A^T m A + bias_lanes (Op floats) of one image's tiles of M [16][T][O].
  void (*output)(const float* M, const float* bias_lanes, int64_t O, int64_t Qp, int64_t TP, int64_t TQ, int64_t tile0,
                 int64_t T, float* staged);
  // dM [16][T][O] = A dY A^T of one staged gradient image's 2x2 tiles (row length Qp).
  void (*grad)(const float* staged, int64_t O, int64_t Qp, int64_t TP, int64_t TQ, int64_t tile0, int64_t T, float* dM);
  // gw [O, I, 3, 3] = G^T dU G for output channels [ob, oe) of dU [16][O][I].
  void (*weight_grad)(const float* dU, int64_t O, int64_t I, int64_t ob, int64_t oe, float* gw);
  // staged [Hp][Wp][Cp] = planes [C, H, W] shifted by (ph, pw), zero elsewhere (channels past C too);
  // false when a value staged was an inf or a NaN.
  bool (*stage)(const float* planes, int64_t C, int64_t H, int64_t W, int64_t ph, int64_t pw, int64_t Hp, int64_t Wp,
                float* staged);
  // planes [O, P, Q] = staged [Pp][Qp][Op], clipped to P x Q.
  void (*unstage)(const float* staged, int64_t O, int64_t P, int64_t Q, int64_t Qp, float* planes);
  // Every point's GEMM operand B for the column blocks [jb0, jb1) of 16 columns:
  // the transform of B(k, j) = w[j][k] (w [O, I, 3, 3]; K = I, N = O), or, flipped,
  // of w[k][j] rotated by 180 degrees (K = O, N = I), in sgemm's packed layout (sgemm.h,
  // PackedB: kc, nr), point x's at packed + x per_point. wt: K 9 16 floats of scratch.
  // False when one of those kernels held an inf or a NaN.
  bool (*weights_packed)(const float* w, int64_t O, int64_t I, bool flipped, int64_t kc, int64_t nr, int64_t per_point,
                         int64_t jb0, int64_t jb1, float* wt, float* packed);
};

extern const WinogradTiles winograd_tiles_baseline;
extern const WinogradTiles winograd_tiles_avx2;
extern const WinogradTiles winograd_tiles_avx512;

}  // namespace ddl::cpu::isa
