// ddl::ft, fault tolerance: a training loop saves a snapshot of its whole state and resumes
// from it after a crash, with every rank agreeing on the same snapshot (docs/fault_tolerance.md).
//   ft::State state{.model = &model, .optimizer = &opt, .position = {.seed = 1, .world_size = world}};
//   ft::resume(path, state, group);  // .resumed false: no snapshot, start afresh
//   ... each step: ++state.position.global_step; now and then ft::save(path, state, group) ...
// It does not decide when to snapshot, nor restart processes (ddlrun --max-restarts does).
#pragma once

#include <string>

#include <ddl/data/dataloader.h>
#include <ddl/dist/process_group.h>
#include <ddl/ft/resume.h>
#include <ddl/ft/snapshot.h>

namespace ddl::dist {
class SyncStrategy;  // dist/sync/strategy.h
}

namespace ddl::ft {

using Position = TrainingPosition;

// What a snapshot holds: the model's parameters and buffers, the optimizer's state and
// hyperparameters, and the position (epoch, batches done in it, optimizer steps, seed, world
// size, batch size). The sampler's order and the learning-rate schedule are functions of the
// position; the default random generator's offset is saved and restored with it.
struct State {
  nn::Module* model = nullptr;
  optim::Optimizer* optimizer = nullptr;
  Position position;
  // Sharded training (zero1, zero2, fsdp): gathered whole into `model` and `optimizer` before
  // a save, so the file holds the unsharded state at any world size. Null for plain runs.
  dist::SyncStrategy* strategy = nullptr;
};

struct ResumeOptions {
  bool allow_nonfinite = false;  // accept NaN/Inf tensors (a diverged run's state)
  bool any_world_size = false;   // accept a snapshot of another world size (elastic jobs)
};

// A collective when `group` has more than one rank (every rank calls it): gathers sharded
// state to rank 0, which writes `path` atomically (temporary file, fsync, rename; mode 0600),
// recording the default generator's offset. Afterwards any earlier file at `path` is either
// whole or replaced whole, also when the process is killed while it writes.
void save(const std::string& path, const State& state, dist::ProcessGroup* group = nullptr);

// Loads `path` into the state when it exists; with a group of several ranks every rank calls
// it and either all resume from the same snapshot (rank 0's, sent to ranks that lack it) or
// all throw the same ddl::Error naming the ranks and files that differ (Note [Resume
// agreement]). state.position comes in with this run's seed, world size and batch size;
// a snapshot of other ones is refused (another world size is accepted with
// options.any_world_size). The outcome's `resumed` says whether the state now holds a
// snapshot's.
ResumeOutcome resume(const std::string& path, State& state, dist::ProcessGroup* group = nullptr,
                     const ResumeOptions& options = {});

// The loader's iterator at the position's next batch: set_epoch(position.epoch), then the
// epoch's first position.step_in_epoch batches skipped (their samples are not trained twice).
data::DataLoader::Iterator resume_batches(data::DataLoader& loader, const Position& position);

}  // namespace ddl::ft
