// The settable default world (see world.h), with the environment as fallback.
#include "data/world.h"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

#include "tensor/error.h"

namespace ddl::data {
namespace {

std::mutex g_mu;
std::optional<World> g_world;

// Parses a non-negative integer environment variable; nullopt when unset.
std::optional<int64_t> env_int(const char* name) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  DDL_CHECK(end != nullptr && *end == '\0' && v >= 0, "default_world: environment variable ", name, "='", s,
            "' is not a non-negative integer");
  return static_cast<int64_t>(v);
}

}  // namespace

void set_default_world(int64_t rank, int64_t world_size) {
  DDL_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, "set_default_world: rank ", rank,
            " is not in [0, world_size) for world_size ", world_size);
  std::lock_guard<std::mutex> lock(g_mu);
  g_world = World{rank, world_size};
}

void clear_default_world() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_world.reset();
}

World default_world() {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_world) return *g_world;
  }
  const auto rank = env_int("RANK");
  const auto world = env_int("WORLD_SIZE");
  if (!rank && !world) return World{};
  const World w{rank.value_or(0), world.value_or(1)};
  DDL_CHECK(w.world_size >= 1 && w.rank < w.world_size, "default_world: RANK=", w.rank,
            " is not below WORLD_SIZE=", w.world_size, " (set both, with 0 <= RANK < WORLD_SIZE)");
  return w;
}

}  // namespace ddl::data
