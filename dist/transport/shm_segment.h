// The shared-memory segment behind ShmAllReduce (internal to dist/): its layout, which
// every rank's mapping shares, and the pieces of its set-up: sizes, mapping, a process's
// identity in /proc, futex waits. shm_all_reduce.cpp holds the protocol that uses them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ddl/dist/store/store.h>

namespace ddl::dist::detail {

inline constexpr uint64_t kShmMagic = 0x316d68732d6c6464;  // "ddl-shm1"
inline constexpr int kShmMaxRanks = 64;
inline constexpr size_t kShmPage = 4096;

// What a rank was asked to all-reduce; ranks compare before moving any data.
struct CallRecord {
  uint64_t tag;  // the group's collective sequence number
  int64_t numel;
  int32_t dtype;
  int32_t op;
};

struct alignas(64) RankState {
  std::atomic<uint32_t> arrived;  // barriers passed (generation)
  std::atomic<uint32_t> joined;   // 1 once pid and start_time are written
  std::atomic<uint32_t> left;     // 1 once this rank destroyed its group
  int32_t pid;
  uint64_t start_time;  // /proc/<pid>/stat field 22: tells a reused pid apart
  CallRecord calls[2];  // by call parity: one may be rewritten while peers read the other
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

struct ShmHeader {
  uint64_t magic;
  uint64_t nonce;
  int32_t size;
  uint64_t slot_bytes;
  alignas(64) std::atomic<uint32_t> aborted;
  RankState ranks[kShmMaxRanks];
};

// Where the slots start, the bytes of one slot (a piece), and of the whole segment.
size_t shm_data_offset();
size_t shm_slot_bytes(int n);
size_t shm_segment_bytes(int n);

// A process as /proc/<pid>/stat shows it; found = false when it is gone or unreadable.
struct ProcState {
  bool found = false;
  char state = '?';
  uint64_t start_time = 0;
};
ProcState read_proc_stat(int pid);

// Sleeps while *word == seen, at most `slice`; wakes every sleeper on `word`.
void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, Millis slice);
void futex_wake(std::atomic<uint32_t>* word);

// See Note [Segment names] in shm_segment.cpp. A segment's name in /dev/shm (no leading
// '/'): "ddl-shm-<creator pid>-<its start time>-<nonce hex>[-<run id>]", the run id taken
// from DDL_RUN_ID (ddlrun sets it; other launchers may), '-' in it written '_'.
std::string shm_segment_name(uint64_t nonce);
struct ShmSegmentName {
  int pid = 0;
  uint64_t start_time = 0;  // 0: a name from before start times were recorded
  std::string run_id;
};
// Parses a name shm_segment_name made (or an older "ddl-shm-<pid>-<nonce>"); false if not one.
bool parse_shm_segment_name(const std::string& file_name, ShmSegmentName* out);
// Whether the process that created a segment of that name is gone (a pid reused by another
// process counts as gone: its start time differs; a zombie too).
bool shm_creator_dead(const ShmSegmentName& n);
// Removes ddl segments from /dev/shm and returns their names: those whose creator is gone
// (run_id empty), or every one carrying `run_id` (the job's launcher, once all its ranks
// have exited). Names of other users' segments that cannot be removed are skipped.
std::vector<std::string> remove_shm_segments(const std::string& run_id = "");

// Maps `name` (creating it when `create`); returns "" or why not. *absent (when given) is set
// when opening an existing segment found no such name: this host's /dev/shm is not rank 0's,
// the normal case for ranks on different hosts, not a fault.
std::string map_segment(const std::string& name, size_t bytes, bool create, void** out, bool* absent = nullptr);
// Publishes this rank's verdict on set-up `step` ("" when fine; `mine_failed`: a fault, not a
// reason to keep TCP) and returns the first failing rank's, or "", with *first_failed its kind.
std::string shm_agree(Store& store, const std::string& step, int rank, int size, const std::string& mine,
                      bool mine_failed, Millis timeout, bool* first_failed);

}  // namespace ddl::dist::detail
