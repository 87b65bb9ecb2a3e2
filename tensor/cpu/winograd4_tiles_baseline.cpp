// Winograd F(4x4, 3x3)'s per-tile arithmetic compiled for the baseline level (winograd4_tiles.h).
#define WINOGRAD4_TILES_NAME winograd4_tiles_baseline
#include "winograd4_tiles.inc"
