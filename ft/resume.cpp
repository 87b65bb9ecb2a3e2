// resume_from_snapshot and state_digest (see resume.h).
//
// Note [Resume agreement]
// With --snapshot on each node's own disk, a restarted job can find the file on some nodes
// only (rank 0 writes it) or an older one elsewhere. Ranks that resumed from different
// steps would run different numbers of collectives until the transport aborted. So after
// each rank tried its own file, the ranks all-gather one fixed-size text record each: kind
// (none, snapshot, error), the path (shown, not compared: paths may differ per node), the
// position and a digest of the model and optimizer tensors. Fixed size keeps the exchange
// itself safe whatever the records say, and an error loading a file becomes a record
// instead of an exception on one rank, which would leave the others waiting in the
// next collective until the timeout. Then, on every rank from the same records:
//   - any rank failed to load: all stop, naming it and its error;
//   - all records equal: go on (all resume, or all start afresh);
//   - rank 0 has none but another rank has one: all stop (rank 0 is authoritative, and
//     silently dropping a snapshot would waste the work it holds);
//   - otherwise rank 0 broadcasts its file's bytes in pieces (resume_transfer.h); the ranks
//     that differed load them,
//     and a second all-gather checks that every rank now holds rank 0's position and digest.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <ddl/base/error.h>
#include <ddl/dist/agreement.h>
#include <ddl/ft/resume.h>
#include <ddl/ft/resume_transfer.h>
#include <ddl/ft/resume_wire.h>

namespace ddl::ft {

namespace {

using Record = detail::ResumeRecord;
using detail::decode_record;
using detail::encode_record;

std::vector<Record> gather(dist::ProcessGroup& group, const Record& mine) {
  std::vector<Record> all;
  for (const std::string& s : dist::all_gather_records(group, encode_record(mine))) all.push_back(decode_record(s));
  return all;
}

std::vector<std::string> lines(const std::vector<Record>& all) {
  std::vector<std::string> out;
  for (const Record& r : all) out.push_back(r.line());
  return out;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

Record loaded_record(const std::string& path, const TrainingPosition& p, const nn::Module& model,
                     const optim::Optimizer& opt) {
  char digest[32];
  std::snprintf(digest, sizeof digest, "%016" PRIx64, state_digest(model, opt));
  return {'S', path,
          "epoch " + std::to_string(p.epoch + 1) + ", step " + std::to_string(p.step_in_epoch) + ", global step " +
              std::to_string(p.global_step),
          "seed " + std::to_string(p.seed) + ", world size " + std::to_string(p.world_size) + ", rng offset " +
              std::to_string(p.rng_offset) + ", state digest " + digest};
}

// This rank's own file; an exception becomes an 'E' record (see Note [Resume agreement]).
Record load_own(const std::string& path, nn::Module& model, optim::Optimizer& opt, TrainingPosition& pos,
                bool allow_nonfinite) {
  try {
    TrainingPosition p = pos;
    if (!load_snapshot(path, model, opt, p, allow_nonfinite)) return {'N', path, "", ""};
    pos = p;
    return loaded_record(path, p, model, opt);
  } catch (const std::exception& e) {
    return {'E', path, "", e.what()};
  }
}

// Rank 0's snapshot as received into `tmp` (see resume_transfer.h).
Record load_received(const std::string& tmp, const std::string& from, nn::Module& model, optim::Optimizer& opt,
                     TrainingPosition& pos, bool allow_nonfinite) {
  try {
    if (detail::resume_test_hook()) detail::resume_test_hook()("loading");
    TrainingPosition p = pos;
    DDL_CHECK(load_snapshot(tmp, model, opt, p, allow_nonfinite), "rank 0's snapshot vanished from ", tmp);
    pos = p;
    return loaded_record(from, p, model, opt);
  } catch (const std::exception& e) {
    return {'E', from, "", std::string("loading rank 0's snapshot: ") + e.what()};
  }
}

void fnv1a(uint64_t& h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
}

void fnv1a(uint64_t& h, const std::string& name, const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  const std::string head = name + ":" + dtype_name(c.dtype()) + ":" + c.shape().str();
  fnv1a(h, head.data(), head.size() + 1);  // with its '\0': names cannot run into data
  fnv1a(h, c.raw_data(), c.nbytes());
}

}  // namespace

uint64_t model_digest(const nn::Module& model) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& [name, v] : model.named_state()) fnv1a(h, name, v.data());
  return h;
}

uint64_t state_digest(const nn::Module& model, const optim::Optimizer& opt) {
  uint64_t h = model_digest(model);
  for (const auto& [name, t] : opt.state_tensors()) fnv1a(h, "optimizer." + name, t);
  return h;
}

ResumeOutcome resume_from_snapshot(const std::string& path, nn::Module& model, optim::Optimizer& opt,
                                   TrainingPosition& pos, dist::ProcessGroup* group, bool allow_nonfinite) {
  if (path.empty()) return {};
  // A rank SIGKILLed while it received a snapshot left its file; any later run removes it.
  std::error_code ec;
  const std::filesystem::path tmp_dir = std::filesystem::temp_directory_path(ec);
  if (!ec) detail::remove_stale_resume_files(tmp_dir.string(), std::chrono::seconds(60));
  if (!group || group->size() == 1) return {load_snapshot(path, model, opt, pos, allow_nonfinite), path, ""};

  // See Note [Resume agreement].
  const TrainingPosition wanted = pos;
  TrainingPosition loaded = pos;
  const Record mine = load_own(path, model, opt, loaded, allow_nonfinite);
  const std::vector<Record> all = gather(*group, mine);
  std::vector<int> failed, differ, have;
  for (int r = 0; r < group->size(); ++r) {
    if (all[r].kind == 'E') failed.push_back(r);
    if (!all[r].same_state(all[0])) differ.push_back(r);
    if (all[r].kind == 'S') have.push_back(r);
  }
  DDL_CHECK(failed.empty(),
            dist::rank_lines_message("resume: " + rank_list(failed) + " could not use the snapshot, so no rank starts",
                                     lines(all),
                                     "Fix or delete the snapshot on the node of " + rank_list(failed) +
                                         "; every rank then resumes from rank 0's (or all start afresh when rank 0 "
                                         "has none)."));
  if (differ.empty()) {
    if (mine.kind == 'N') return {};
    pos = loaded;
    return {true, path, ""};
  }
  DDL_CHECK(all[0].kind == 'S',
            dist::rank_lines_message("resume: rank 0 has no snapshot but " + rank_list(have) +
                                         (have.size() == 1 ? " has one" : " have one") +
                                         "; rank 0's is the one every rank resumes from, so no rank starts",
                                     lines(all),
                                     "To resume, copy the snapshot to rank 0's node (" + all[0].path +
                                         "); to start afresh, delete it on " + rank_list(have) + "."));

  // Rank 0 sends its file in pieces; the ranks that differed write it to a temporary file
  // (removed when this block ends, or on SIGTERM) and load it.
  Record now = mine;
  const bool receiver = std::find(differ.begin(), differ.end(), group->rank()) != differ.end();
  const std::string from = all[0].path + " (received from rank 0)";
  {
    std::optional<detail::ResumeTempFile> tmp;
    std::string tmp_error;
    try {
      if (receiver) tmp.emplace();
    } catch (const std::exception& e) {
      tmp_error = e.what();  // still takes part in the transfer, then says so below
    }
    const std::string error = detail::transfer_snapshot(*group, path, tmp ? &*tmp : nullptr);
    if (group->rank() == 0 && !error.empty()) now = {'E', path, "", error};
    if (receiver) {
      loaded = wanted;
      if (!tmp)
        now = {'E', from, "", tmp_error};
      else if (!error.empty())
        now = {'E', from, "", "receiving rank 0's snapshot: " + error};
      else
        now = load_received(tmp->path(), from, model, opt, loaded, allow_nonfinite);
    }
  }
  const std::vector<Record> after = gather(*group, now);
  bool agree = true;
  for (const Record& r : after)
    agree = agree && r.kind == 'S' && r.where == after[0].where && r.detail == after[0].detail;
  DDL_CHECK(agree, dist::rank_lines_message("resume: after rank 0 sent its snapshot the ranks still differ, so no rank "
                                            "starts",
                                            lines(after)));
  pos = loaded;
  std::string note = "resume: ";
  for (size_t i = 0; i < differ.size(); ++i) {
    const Record& r = all[differ[i]];
    note += (i ? ", " : "") + std::string("rank ") + std::to_string(differ[i]) +
            (r.kind == 'N' ? " had no snapshot at " + r.path : " had another snapshot (" + r.where + ") at " + r.path);
  }
  note += "; sent rank 0's (" + all[0].where + ") to " + (differ.size() == 1 ? "it" : "them");
  return {true, receiver ? all[0].path + " (received from rank 0)" : path, note};
}

}  // namespace ddl::ft
