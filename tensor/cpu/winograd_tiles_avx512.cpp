// Winograd's per-tile arithmetic compiled for the avx512 level (winograd_tiles.h).
#define WINOGRAD_TILES_NAME winograd_tiles_avx512
#include "winograd_tiles.inc"
