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
//   - otherwise rank 0 broadcasts its file's bytes; the ranks that differed load them,
//     and a second all-gather checks that every rank now holds rank 0's position and digest.
#include "apps/train_cifar/resume.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dist/agreement.h"
#include "tensor/error.h"

namespace ddl::apps {

namespace {

struct Record {
  char kind = 'N';     // 'N' no snapshot, 'S' snapshot loaded, 'E' error
  std::string path;    // shown in messages, not compared
  std::string where;   // "epoch 1, step 8, global step 8" (epochs counted from 1, as printed elsewhere)
  std::string detail;  // seed, world size, RNG offset and digest; or the error
  bool same_state(const Record& o) const { return kind == o.kind && where == o.where && detail == o.detail; }
  std::string line() const {
    if (kind == 'N') return "no snapshot at " + path;
    if (kind == 'S') return "snapshot at " + path + ": " + where + ", " + detail;
    return "could not use " + path + ": " + detail;
  }
};

std::string encode(const Record& r) {
  return std::string(1, r.kind) + "\n" + r.path + "\n" + r.where + "\n" + r.detail;
}

Record decode(const std::string& s) {
  std::istringstream in(s);
  Record r;
  std::string kind;
  std::getline(in, kind);
  std::getline(in, r.path);
  std::getline(in, r.where);
  std::getline(in, r.detail, '\0');  // the rest: an error may span lines
  r.kind = kind.size() == 1 ? kind[0] : 'E';
  return r;
}

std::vector<Record> gather(dist::ProcessGroup& group, const Record& mine) {
  std::vector<Record> all;
  for (const std::string& s : dist::all_gather_records(group, encode(mine))) all.push_back(decode(s));
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

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  DDL_CHECK(f, "cannot open ", path, " to send it to the other ranks");
  std::ostringstream s;
  s << f.rdbuf();
  DDL_CHECK(f, "cannot read ", path, " to send it to the other ranks");
  return s.str();
}

// Rank 0's snapshot bytes, loaded through a temporary file that is removed afterwards.
Record load_received(const std::string& bytes, const std::string& from, nn::Module& model, optim::Optimizer& opt,
                     TrainingPosition& pos, bool allow_nonfinite) {
  // mkstemp: a fresh file only this user can read, never one someone placed there first.
  std::string name = (std::filesystem::temp_directory_path() / "ddl-resume-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    return {'E', from, "",
            "cannot create a temporary file for rank 0's snapshot: " + std::string(std::strerror(errno))};
  ::close(fd);
  const std::filesystem::path tmp = name;
  struct Remove {
    const std::filesystem::path& p;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove(p, ec);
    }
  } remove{tmp};
  try {
    DDL_CHECK(!bytes.empty(), "rank 0 sent no snapshot (it could not read its file)");
    {
      std::ofstream f(tmp, std::ios::binary);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      DDL_CHECK(f.flush(), "cannot write rank 0's snapshot to ", tmp.string());
    }
    TrainingPosition p = pos;
    DDL_CHECK(load_snapshot(tmp.string(), model, opt, p, allow_nonfinite), "rank 0's snapshot vanished from ",
              tmp.string());
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

  // Rank 0 sends its file; the ranks that differed load it.
  Record now = mine;
  std::string bytes;
  try {
    if (group->rank() == 0) bytes = read_file(path);
  } catch (const std::exception& e) {
    now = {'E', path, "", e.what()};  // the others receive nothing and say so below
  }
  bytes = dist::broadcast_bytes(*group, bytes, 0);
  const bool receiver = std::find(differ.begin(), differ.end(), group->rank()) != differ.end();
  if (receiver) {
    loaded = wanted;
    now = load_received(bytes, all[0].path + " (received from rank 0)", model, opt, loaded, allow_nonfinite);
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

}  // namespace ddl::apps
