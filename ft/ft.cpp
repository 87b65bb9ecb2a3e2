// save, resume and resume_batches (see ft.h): the library's face over snapshot.h (the file)
// and resume.h (the agreement between ranks).
#include <ddl/base/error.h>
#include <ddl/dist/sync/strategy.h>
#include <ddl/ft/ft.h>
#include <ddl/tensor/core/random.h>

namespace ddl::ft {

namespace {
void check_state(const State& state, const char* op) {
  DDL_CHECK(state.model && state.optimizer, op, ": the state names no ", state.model ? "optimizer" : "model",
            " (set State::model and State::optimizer)");
}
}  // namespace

void save(const std::string& path, const State& state, dist::ProcessGroup* group) {
  check_state(state, "ft::save");
  DDL_CHECK(!path.empty(), "ft::save: empty snapshot path");
  if (state.strategy) {  // every rank: the collectives that make rank 0's copy whole
    state.strategy->gather_full_model();
    state.strategy->consolidate_optimizer_state(*state.optimizer, 0);
  }
  if (group && group->rank() != 0) return;
  Position pos = state.position;
  pos.rng_offset = default_generator().offset();
  save_snapshot(path, *state.model, *state.optimizer, pos);
}

ResumeOutcome resume(const std::string& path, State& state, dist::ProcessGroup* group, const ResumeOptions& options) {
  check_state(state, "ft::resume");
  state.position.any_world_size = options.any_world_size;
  // fsdp: the parameters whole, so a snapshot's weights load into them (a collective; the
  // path is the same on every rank, and a run without snapshots moves no extra bytes).
  if (state.strategy && !path.empty()) state.strategy->gather_full_model();
  ResumeOutcome out =
      resume_from_snapshot(path, *state.model, *state.optimizer, state.position, group, options.allow_nonfinite);
  if (out.resumed && state.strategy) state.strategy->load_full_state(*state.optimizer);  // fsdp: its slices
  return out;
}

data::DataLoader::Iterator resume_batches(data::DataLoader& loader, const Position& position) {
  loader.set_epoch(position.epoch);
  auto batch = loader.begin();
  for (int64_t step = 0; step < position.step_in_epoch && batch != loader.end(); ++step) ++batch;
  return batch;
}

}  // namespace ddl::ft
