// Resuming at another world size: elastic jobs (ddlrun --nnodes MIN:MAX sets DDL_ELASTIC=1;
// docs/dist.md, "Elastic jobs") and sharded runs restarted at another size
// (docs/fault_tolerance.md). See Note [Elastic resume] in elastic_resume.cpp for what
// carries over and why. It does not load
// anything: snapshot.h and resume.h do, accepting another world size when asked to.
#pragma once

#include <cstdint>
#include <string>

#include <ddl/ft/snapshot.h>

namespace ddl::ft {

// True when DDL_ELASTIC=1: a snapshot of another world size may be resumed.
bool elastic_run();

// True for the strategies whose snapshot holds the whole state (ddp, allreduce, zero1, zero2,
// fsdp), which may therefore resume at another world size.
bool resizable_sync(const std::string& sync);
// zero1, zero2, fsdp: sharded runs, whose snapshots resume at another world size without DDL_ELASTIC.
bool sharded_sync(const std::string& sync);

// After a resume: when pos (the snapshot's) has another world size than `world`, checks
// that `sync` is resizable (else ddl::Error naming it). With this run's per-rank
// `batch_size` making the snapshot's global batch, the position carries over as it is;
// otherwise a mid-epoch position moves to the next epoch's start and the schedule to
// epoch * steps_per_epoch of this world size. Returns a line saying so ("" otherwise).
std::string adapt_to_world(TrainingPosition& pos, int64_t world, int64_t steps_per_epoch, const std::string& sync,
                           int64_t batch_size = 0);

}  // namespace ddl::ft
