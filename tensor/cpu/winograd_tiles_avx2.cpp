// Winograd's per-tile arithmetic compiled for the avx2 level (winograd_tiles.h).
#define WINOGRAD_TILES_NAME winograd_tiles_avx2
#include "winograd_tiles.inc"
