// Snapshots for fault-tolerant training (the pattern of PyTorch's
// "Fault-tolerant Distributed Training with torchrun" tutorial): rank 0 writes
// model and optimizer state plus where training stands, atomically; at start
// every rank resumes from the snapshot when it exists.
#pragma once

#include <cstdint>
#include <string>

#include <ddl/nn/module.h>
#include <ddl/optim/optimizer.h>

namespace ddl::ft {

struct TrainingPosition {
  int64_t epoch = 0;          // the epoch in progress (or next to start)
  int64_t step_in_epoch = 0;  // batches of that epoch already done
  int64_t global_step = 0;    // optimizer steps so far (the lr schedule's position)
  uint64_t seed = 0;
  int64_t world_size = 1;
  uint64_t rng_offset = 0;      // the default generator's position (dropout masks)
  int64_t batch_size = 0;       // per worker; 0: unknown (a snapshot from before it was recorded)
  bool any_world_size = false;  // in: accept a snapshot of another world size (elastic_resume.h)
};

// Writes one safetensors file at PATH, atomically: model, optimizer state, position, and
// metadata notes saying how the scheduler, sampler and RNGs are rebuilt from the position.
void save_snapshot(const std::string& path, const nn::Module& model, const optim::Optimizer& opt,
                   const TrainingPosition& pos);

// True and fills everything when a snapshot exists. Every metadata field is validated
// (a ddl::Error names the file and key); seed, world size (unless pos.any_world_size), batch size and the optimizer's
// hyperparameters other than lr (momentum, weight decay, ...) must match this run's, or
// the error says which flag differs: resuming with others would silently change the run.
// Every tensor (weights, buffers, optimizer state), in the dtype the run holds it in, must be
// finite unless allow_nonfinite; the error names the file and the tensor, and comes before
// anything is modified.
bool load_snapshot(const std::string& path, nn::Module& model, optim::Optimizer& opt, TrainingPosition& pos,
                   bool allow_nonfinite = false);

// Loads model weights from `path`: a --save file (exactly the model's tensors) or a
// snapshot (the model's tensors plus the optimizer's, which are ignored). Any other
// tensor the model lacks is an error; NaN/Inf weights are refused unless allow_nonfinite.
void load_weights(const std::string& path, nn::Module& model, bool allow_nonfinite = false);

}  // namespace ddl::ft
