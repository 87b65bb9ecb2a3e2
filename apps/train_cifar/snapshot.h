// Snapshots for fault-tolerant training (seed 000's pattern): rank 0 writes
// model and optimizer state plus where training stands, atomically; at start
// every rank resumes from the snapshot when it exists.
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"
#include "optim/optimizer.h"

namespace ddl::apps {

struct TrainingPosition {
  int64_t epoch = 0;          // the epoch in progress (or next to start)
  int64_t step_in_epoch = 0;  // batches of that epoch already done
  int64_t global_step = 0;    // optimizer steps so far (the lr schedule's position)
  uint64_t seed = 0;
  int64_t world_size = 1;
  uint64_t rng_offset = 0;  // the default generator's position (dropout masks)
};

// Writes one safetensors file at PATH, atomically: model, optimizer state, position, and
// metadata notes saying how the scheduler, sampler and RNGs are rebuilt from the position.
void save_snapshot(const std::string& path, const nn::Module& model, const optim::Optimizer& opt,
                   const TrainingPosition& pos);

// True and fills everything when a snapshot exists; checks seed and world size match.
bool load_snapshot(const std::string& path, nn::Module& model, optim::Optimizer& opt, TrainingPosition& pos);

}  // namespace ddl::apps
