// Where this process sits in a data-parallel job: its rank and the world size.
// Samplers read it when they are not told explicitly. dist's init_process_group
// calls set_default_world; without it the RANK / WORLD_SIZE environment
// variables decide, and without those the process is rank 0 of 1.
#pragma once

#include <cstdint>

namespace ddl::data {

struct World {
  int64_t rank = 0;
  int64_t world_size = 1;
};

// Requires 0 <= rank < world_size. Thread-safe.
void set_default_world(int64_t rank, int64_t world_size);
// Forgets a world set by set_default_world (back to the environment, then (0, 1)).
void clear_default_world();
// The world set above, else RANK / WORLD_SIZE from the environment, else {0, 1}.
// Throws ddl::Error when the environment holds malformed or inconsistent values.
World default_world();

}  // namespace ddl::data
