// GroupRecorder: one process group's numbering of its collectives and sends/recvs in the
// flight recorder (see recorder.h). The counters live in the process-wide table so that a
// dump, from a signal handler too, sees every group's position.
#include <algorithm>

#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/flight/recorder_internal.h>

namespace ddl::dist::flight {

using namespace detail;

GroupRecorder::GroupRecorder(std::string backend, std::shared_ptr<Store> store, int rank, int size)
    : store_(std::move(store)), rank_(rank), size_(size) {
  set_up(rank, size);
  Globals& g = globals();
  std::lock_guard<std::mutex> lock(g.mu);
  // A free slot, else the first of a destroyed group: a group that failed and was destroyed
  // (a program's error path) still shows in the dumps written after it.
  for (int pass = 0; pass < 2 && slot_ < 0; ++pass)
    for (int i = 0; i < kMaxGroups && slot_ < 0; ++i) {
      GroupSlot& s = g.groups[i];
      if (pass == 0 ? s.used.load() : s.alive.load()) continue;
      copy_text(s.backend, sizeof s.backend, backend.c_str());
      s.rank = rank;
      s.size = size;
      s.next_seq = 1;
      s.next_p2p = 1;
      s.last_completed = 0;
      s.suspect = -1;
      s.note[0] = '\0';
      s.used = true;
      s.alive = true;
      slot_ = i;
    }
}

GroupRecorder::~GroupRecorder() {
  if (slot_ >= 0) globals().groups[slot_].alive = false;
}

uint64_t GroupRecorder::start(OpKind kind, const std::string& desc, int64_t bytes, int peer) {
  if (slot_ < 0) return 0;
  GroupSlot& s = globals().groups[slot_];
  const uint64_t seq = peer >= 0 ? s.next_p2p++ : s.next_seq++;
  return record(slot_, static_cast<uint8_t>(kind), seq, desc, bytes, peer);
}

void GroupRecorder::complete(uint64_t id, int64_t bytes_sent, int64_t bytes_received) {
  {
    std::lock_guard<std::mutex> lock(globals().mu);  // the entry's slot may be rewritten meanwhile
    if (Entry* e = find(id); e && e->peer < 0 && slot_ >= 0) {
      std::atomic<uint64_t>& last = globals().groups[slot_].last_completed;
      if (last.load() < e->seq) last.store(e->seq);
    }
  }
  finish(id, State::Completed, bytes_sent, bytes_received);
}

void GroupRecorder::fail(uint64_t id, const std::string& reason) {
  finish(id, State::Failed, -1, -1);
  note_failure(reason);
  dump(reason);
  write_partial_trace();
}

uint64_t GroupRecorder::seq_of(uint64_t id) const {
  {
    std::lock_guard<std::mutex> lock(globals().mu);
    if (const Entry* e = find(id)) return e->seq;
  }
  return slot_ >= 0 ? globals().groups[slot_].next_seq.load() - 1 : 0;
}

uint64_t GroupRecorder::last_completed() const {
  return slot_ >= 0 ? globals().groups[slot_].last_completed.load() : 0;
}

void GroupRecorder::set_suspect(int rank, const std::string& note) {
  if (slot_ < 0) return;
  Globals& g = globals();
  std::lock_guard<std::mutex> lock(g.mu);
  copy_text(g.groups[slot_].note, sizeof g.groups[slot_].note, note.c_str());
  g.groups[slot_].suspect = rank;
}

}  // namespace ddl::dist::flight
