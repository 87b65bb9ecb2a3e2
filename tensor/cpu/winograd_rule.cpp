// Which Winograd variant a convolution takes (winograd.h): the shape rule of
// Note [Winograd tile size], and the DDL_WINOGRAD override for comparisons.
#include <atomic>
#include <cstdlib>
#include <string>

#include <ddl/tensor/cpu/winograd.h>
#include <ddl/tensor/error.h>

namespace ddl::cpu::winograd {
namespace {

// Note [Winograd tile size]
// F(4x4, 3x3) does 36 multiplies per channel pair for 16 outputs, F(2x2, 3x3) 64 (4
// tiles of 16): 1.78x fewer. But its transforms cost more per output (6x6 patches
// with factors 2 to 8), its GEMMs have 4x fewer rows for the same map, and a map
// whose side is not a multiple of 4 wastes a partial tile's work. Measured on
// VGG-11's CIFAR layers (batch 64; docs/tensor.md, "Winograd accuracy and speed"):
// see kMinMapFor4x4.
constexpr int64_t kMinMapFor4x4 = 8;

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
  // See Note [Winograd tile size]
  return std::min(g.P, g.Q) >= kMinMapFor4x4 ? 4 : 2;
}

}  // namespace ddl::cpu::winograd
