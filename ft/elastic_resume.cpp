// adapt_to_world (see elastic_resume.h).
//
// Note [Elastic resume]
// With DDP every replica holds the same model and optimizer state after each step, so the
// snapshot rank 0 wrote is every rank's, at any world size. What depends on the world size
// is the data position: DistributedSampler deals epoch e's permutation out as rank r taking
// indices r, r + W, r + 2W, ..., so after s steps of batch B the first s·B·W samples of the
// permutation are consumed, and at another W' those would be split differently (part of them
// trained twice, part of the rest skipped, unless a sampler started from an offset). We
// resume a mid-epoch snapshot at the next epoch boundary instead: the rest of that epoch is
// skipped, which loses at most one epoch's tail and needs no new sampler; snapshots taken at
// an epoch's end (--snapshot-every, the default) lose nothing. The per-rank batch stays
// --batch-size, so the global batch is B·W' from then on (torchrun's elastic behaviour too:
// scale the learning rate yourself if you want it to follow). The schedule is a function of
// the optimizer step; the step count per epoch changes with W, so the schedule resumes at
// epoch · steps_per_epoch(W'): the same fraction of training.
// A run that keeps the global batch instead (--batch-size B' with B'·W' = B·W) consumes the
// permutation exactly as before: step s takes its samples s·B·W .. (s+1)·B·W - 1 at either
// world size, so the position carries over unchanged, mid-epoch too, and only the order of
// the gradient sums differs. ZeRO (zero1, zero2) and FSDP snapshots hold the whole,
// unsharded state (ft::save gathers it), so they resume at any W like ddp and allreduce.
// Strategies that keep state per rank (param-server's server, local-sgd's drift, ...)
// cannot be resumed at another W from rank 0's file, and refuse.
#include <cstdlib>
#include <string>

#include <ddl/base/error.h>
#include <ddl/ft/elastic_resume.h>

namespace ddl::ft {

bool elastic_run() {
  const char* v = std::getenv("DDL_ELASTIC");
  return v && std::string(v) == "1";
}

bool resizable_sync(const std::string& sync) {
  return sync == "ddp" || sync == "allreduce" || sync == "zero1" || sync == "zero2" || sync == "fsdp";
}

bool sharded_sync(const std::string& sync) { return sync == "zero1" || sync == "zero2" || sync == "fsdp"; }

std::string adapt_to_world(TrainingPosition& pos, int64_t world, int64_t steps_per_epoch, const std::string& sync,
                           int64_t batch_size) {
  if (pos.world_size == world) return "";
  DDL_CHECK(
      resizable_sync(sync), "resume: the snapshot was taken at world size ", pos.world_size,
      " and this run has world size ", world, ": --sync ", sync,
      " cannot change world size (its state is per rank); ddp and allreduce can, their replicas being "
      "identical, and so can zero1, zero2 and fsdp, their snapshots holding the whole state. Rerun at world size ",
      pos.world_size, " or start afresh");
  std::string note = "elastic resume: world size " + std::to_string(pos.world_size) + " -> " + std::to_string(world);
  if (batch_size > 0 && pos.batch_size > 0 && batch_size != pos.batch_size &&
      batch_size * world == pos.batch_size * pos.world_size) {
    note += "; the same global batch (" + std::to_string(batch_size) + " x " + std::to_string(world) +
            "): resuming at epoch " + std::to_string(pos.epoch + 1) + ", step " + std::to_string(pos.step_in_epoch);
    pos.world_size = world;
    pos.batch_size = batch_size;
    return note;
  }
  if (batch_size > 0) pos.batch_size = batch_size;
  if (pos.step_in_epoch > 0) {
    note += "; the rest of epoch " + std::to_string(pos.epoch + 1) + " (after its batch " +
            std::to_string(pos.step_in_epoch) + ") is skipped: resuming at the start of epoch " +
            std::to_string(pos.epoch + 2);
    ++pos.epoch;
    pos.step_in_epoch = 0;
  }
  pos.global_step = pos.epoch * steps_per_epoch;
  pos.world_size = world;
  return note + "; schedule at step " + std::to_string(pos.global_step);
}

}  // namespace ddl::ft
