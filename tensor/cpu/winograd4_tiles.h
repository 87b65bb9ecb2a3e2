#pragma once
// The per-tile arithmetic of Winograd F(4x4, 3x3) (Note [Winograd F(4x4, 3x3)] in
// winograd4_tiles.inc), once per instruction-set level as F(2x2)'s (winograd_tiles.h):
// the same table of functions, with 6x6 tiles, so 36 transform points where that
// header says 16 and steps of 4 pixels where it says 2.
#include <ddl/tensor/cpu/winograd_tiles.h>

namespace ddl::cpu::isa {

extern const WinogradTiles winograd4_tiles_baseline;
extern const WinogradTiles winograd4_tiles_avx2;
extern const WinogradTiles winograd4_tiles_avx512;

}  // namespace ddl::cpu::isa
