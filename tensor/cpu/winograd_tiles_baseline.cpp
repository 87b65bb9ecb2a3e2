// Winograd's per-tile arithmetic compiled for the baseline level (winograd_tiles.h).
#define WINOGRAD_TILES_NAME winograd_tiles_baseline
#include "winograd_tiles.inc"
