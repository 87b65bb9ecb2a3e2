// Which Winograd variant a convolution takes (winograd.h): the shape rule of
// Note [Winograd tile size], and the DDL_WINOGRAD override for comparisons.
#include <atomic>
#include <cstdlib>
#include <string>

#include <ddl/base/error.h>
#include <ddl/tensor/cpu/winograd.h>

namespace ddl::cpu::winograd {
namespace {

// Note [Winograd tile size]
// F(4x4, 3x3) multiplies 36 transform points per 4x4 output tile, F(2x2, 3x3) 16 per
// 2x2 tile: on a map whose sides are multiples of 4 that is 36 against 64, 1.78x fewer.
// But F(4x4)'s transforms cost more per output (6x6 patches, factors up to 8) and a
// side that is not a multiple of 4 wastes part of its last tiles: on a 2x2 map it
// multiplies 36 points for 4 outputs where F(2x2) multiplies 16. Measured on VGG-11's
// CIFAR layers (batch 64, one core, conv forward + both gradients, AVX-512 / AVX2):
// F(4x4) is 1.3-1.4x faster on 16x16 and 8x8 maps, 1.07-1.2x on 4x4, and 2-2.3x
// slower on 2x2 (where F(2x2) still beats im2col). So F(4x4) runs where its
// transform-domain multiplies are at most 3/4 of F(2x2)'s (tiles4 * 36 <= 0.75 *
// tiles2 * 16): square maps of side 3, 4, 7 and more, not 1, 2, 5 or 6 (where
// both tilings multiply as many points or F(2x2) fewer).
bool four_pays(const Geom& g) {
  const int64_t tiles4 = ((g.P + 3) / 4) * ((g.Q + 3) / 4), tiles2 = ((g.P + 1) / 2) * ((g.Q + 1) / 2);
  return 3 * tiles4 <= tiles2;
}

Mode mode_from_environment() {
  const char* s = std::getenv("DDL_WINOGRAD");
  if (s == nullptr || *s == '\0') return Mode::automatic;
  const std::string v = s;
  if (v == "auto") return Mode::automatic;
  if (v == "2") return Mode::f2;
  if (v == "4") return Mode::f4;
  if (v == "off") return Mode::off;
  DDL_CHECK(false, "DDL_WINOGRAD=", v, ": not one of auto, 2, 4, off");
  return Mode::automatic;
}

std::atomic<int>& mode_in_use() {
  static std::atomic<int> m{static_cast<int>(mode_from_environment())};
  return m;
}

}  // namespace

Mode mode() { return static_cast<Mode>(mode_in_use().load(std::memory_order_relaxed)); }
void set_mode(Mode m) { mode_in_use().store(static_cast<int>(m), std::memory_order_relaxed); }

int tile_size(const Geom& g) {
  switch (mode()) {
    case Mode::f2:
      return 2;
    case Mode::f4:
      return 4;
    case Mode::automatic:
    case Mode::off:
      break;
  }
  return four_pays(g) ? 4 : 2;  // See Note [Winograd tile size]
}

}  // namespace ddl::cpu::winograd
