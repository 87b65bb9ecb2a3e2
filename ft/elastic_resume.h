// Resuming at another world size, for elastic jobs (ddlrun --nnodes MIN:MAX sets
// DDL_ELASTIC=1; docs/dist.md, "Elastic jobs"). See Note [Elastic resume] in
// elastic_resume.cpp for what carries over and why at an epoch boundary. It does not load
// anything: snapshot.h and resume.h do, accepting another world size when asked to.
#pragma once

#include <cstdint>
#include <string>

#include <ddl/ft/snapshot.h>

namespace ddl::ft {

// True when DDL_ELASTIC=1: a snapshot of another world size may be resumed.
bool elastic_run();

// After a resume: when pos (the snapshot's) has another world size than `world`, checks
// that `sync` keeps identical, stateless replicas (ddp, allreduce; else ddl::Error naming
// it), moves a mid-epoch position to the next epoch's start, puts the schedule at
// epoch * steps_per_epoch of this world size, and returns a line saying so ("" otherwise).
std::string adapt_to_world(TrainingPosition& pos, int64_t world, int64_t steps_per_epoch, const std::string& sync);

}  // namespace ddl::ft
