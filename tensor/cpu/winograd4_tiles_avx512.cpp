// Winograd F(4x4, 3x3)'s per-tile arithmetic compiled for the avx512 level (winograd4_tiles.h).
#define WINOGRAD4_TILES_NAME winograd4_tiles_avx512
#include "winograd4_tiles.inc"
