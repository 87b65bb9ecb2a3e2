// Resuming from --snapshot when ranks may see different files (each node's own disk):
// every rank loads its own, then the ranks agree through the group on the position and a
// digest of model and optimizer state. Rank 0's snapshot is authoritative: it is sent to
// ranks that lack it or hold another; when rank 0 has none but others do, or a rank could
// not load its file, every rank stops with the same message. Writing snapshots stays with
// rank 0 (main.cpp). See Note [Resume agreement] in resume.cpp.
#pragma once

#include <cstdint>
#include <string>

#include <ddl/dist/process_group.h>
#include <ddl/ft/snapshot.h>

namespace ddl::ft {

struct ResumeOutcome {
  bool resumed = false;  // model, optimizer, pos and the RNG hold the snapshot's state, on every rank
  std::string source;    // where this rank's state came from: its snapshot path, or rank 0's
  std::string note;      // for rank 0 to print when snapshots were sent; empty otherwise
};

// pos comes in with this run's seed and world size. Without a group (or with an empty
// path): load_snapshot. With a group it is a collective that every rank calls with a
// non-empty path; it either returns the same position and state on every rank or throws
// ddl::Error with the same message on every rank.
ResumeOutcome resume_from_snapshot(const std::string& path, nn::Module& model, optim::Optimizer& opt,
                                   TrainingPosition& pos, dist::ProcessGroup* group, bool allow_nonfinite = false);

// 64-bit FNV-1a over the names, dtypes, shapes and bytes of model.named_state(), then of
// opt.state_tensors(): equal on two ranks when they hold the same state.
uint64_t state_digest(const nn::Module& model, const optim::Optimizer& opt);
// The same over model.named_state() alone (parameters and buffers): the --metrics summary's
// "model_digest", equal on every rank of a data-parallel run that kept its replicas equal.
uint64_t model_digest(const nn::Module& model);

}  // namespace ddl::ft
