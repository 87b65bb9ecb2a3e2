// The flight recorder's process-wide state, shared by recorder.cpp (ring and dump),
// group_recorder.cpp and signals.cpp. Fixed-size fields only, so a signal handler can read
// and format them without allocating. Internal to dist/flight/.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include <ddl/dist/flight/recorder.h>

namespace ddl::dist::flight::detail {

inline constexpr uint8_t kRendezvous = 255;  // an Entry's kind for the rendezvous
inline constexpr int kMaxGroups = 32;

struct Entry {
  std::atomic<uint64_t> id{0};  // 0: empty or being rewritten
  int32_t group = -1;           // slot in Globals::groups; -1: the process (rendezvous)
  uint64_t seq = 0;
  uint8_t kind = 0;  // OpKind, or kRendezvous
  std::atomic<uint8_t> state{0};
  int32_t peer = -1;  // send/recv: the other rank; collectives: -1
  int64_t bytes = 0, sent = -1, received = -1;
  int64_t start_ns = 0;
  std::atomic<int64_t> end_ns{0};
  char desc[120] = "";
};

struct GroupSlot {
  std::atomic<bool> used{false};   // it appears in dumps
  std::atomic<bool> alive{false};  // its group exists (a destroyed group's slot stays in dumps until reused)
  char backend[16] = "";
  int rank = 0, size = 0;
  std::atomic<uint64_t> next_seq{1}, next_p2p{1}, last_completed{0};
  std::atomic<int> suspect{-1};
  char note[384] = "";
};

struct Globals {
  std::mutex mu;       // writers of the ring and the groups
  std::mutex dump_mu;  // one normal-path dump at a time
  std::atomic_flag dumping = ATOMIC_FLAG_INIT;
  int capacity = 0;
  Entry* ring = nullptr;
  std::atomic<uint64_t> next_id{1};
  GroupSlot groups[kMaxGroups];
  int rank = -1, world = 0;
  uint64_t rendezvous_id = 0;
  char host[128] = "";
  char final_path[1024] = "";
  char tmp_path[1024] = "";
  char reason[512] = "";
  char first_failure[1024] = "";
  char* dump_buf = nullptr;
  size_t dump_cap = 0;
  std::string trace_path;
  bool trace_written = false;
  std::mutex trace_mu;  // held while this rank's part of --trace is written
};

Globals& globals();
int64_t wall_ns();
void copy_text(char* dst, size_t cap, const char* src);
void set_up(int rank, int world);
uint64_t record(int group, uint8_t kind, uint64_t seq, const std::string& desc, int64_t bytes, int peer);
Entry* find(uint64_t id);
void finish(uint64_t id, State s, int64_t sent, int64_t received);
void note_failure(const std::string& reason);
// Writes this rank's part of the --trace timeline beside the trace's path, once.
void write_partial_trace();
// Async-signal-safe dump (skipped while another is being written).
bool dump_from_signal(const char* reason);
void install_signal_handlers();

// Appends JSON to a fixed buffer without allocating (signal-safety(7)); truncates when full.
struct Writer {
  char* buf;
  size_t cap, len;
  void raw(const char* s);
  void str(const char* s);  // a quoted, escaped string
  void num(int64_t v);
  void key(const char* k);
};
size_t format_dump(Writer& w, const char* reason);

}  // namespace ddl::dist::flight::detail
