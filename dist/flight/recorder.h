// dist/flight/: the flight recorder. Every rank keeps a ring buffer of its last collectives
// and sends/recvs (op, sizes, per-group sequence number, peers, times, started / completed /
// failed) and writes it as one small JSON file when a collective fails, on a fatal signal
// and on SIGUSR2, into the folder DDL_FLIGHT_DIR names (ddlrun sets it); ddlrun merges the
// files into a verdict (apps/ddlrun/verdict.h). PyTorch's counterpart is ProcessGroupNCCL's
// flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE). It records; it does not decide who is at fault.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <ddl/dist/process_group.h>
#include <ddl/dist/store/store.h>

namespace ddl::dist::flight {

enum class State : uint8_t { Started, Completed, Failed };

// Entries kept per process: DDL_FLIGHT_RECORDER (default 256; 0 turns the recorder off).
int capacity();

// This process's rank and world as init_process_group reads them, and the start of its
// rendezvous (recorded as "rendezvous", group -1, seq 0). Installs the dump handlers: see
// Note [Flight dumps]. Safe to call more than once.
void begin_process(int rank, int world);
// The rendezvous ended; `error` non-empty: it failed (and the recorder dumps).
void end_rendezvous(const std::string& error);

// One process group's view of the recorder. Collectives get 1, 2, 3, ... in call order
// (the same on every rank); sends and recvs are numbered apart, per group.
class GroupRecorder {
 public:
  // `store`: the group's store, where a failing rank looks for the laggard (laggard.h).
  GroupRecorder(std::string backend, std::shared_ptr<Store> store, int rank, int size);
  ~GroupRecorder();
  GroupRecorder(const GroupRecorder&) = delete;
  GroupRecorder& operator=(const GroupRecorder&) = delete;

  // Records a collective (peer -1) or a send/recv (peer >= 0) as started; returns its id.
  // `desc`: what must match across ranks, e.g. "all_reduce(float32[1000], sum)".
  uint64_t start(OpKind kind, const std::string& desc, int64_t bytes, int peer = -1);
  void complete(uint64_t id, int64_t bytes_sent = -1, int64_t bytes_received = -1);
  // Marks it failed and dumps (reason: the error message).
  void fail(uint64_t id, const std::string& reason);
  // The seq of the collective `id` ("all_reduce #42"; id 0: the last one started), and the
  // last one completed (0: none).
  uint64_t seq_of(uint64_t id) const;
  uint64_t last_completed() const;
  // Who this rank blames (laggard.h's verdict), written into its dump.
  void set_suspect(int rank, const std::string& note);
  const std::shared_ptr<Store>& store() const { return store_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int slot_ = -1;  // index in the process's group table
  std::shared_ptr<Store> store_;
  int rank_, size_;
};

// Writes this process's dump now (normal code path, not from a signal handler). Returns the
// file written, or "" when DDL_FLIGHT_DIR is unset or the recorder is off.
std::string dump(const std::string& reason);
// From a crash path (a terminate handler, a signal handler): the allocation-free dump.
void dump_on_crash(const char* reason) noexcept;
// The dump as JSON text (what dump() writes), for tests.
std::string to_json(const std::string& reason);
// --trace: the path whose per-rank partial timeline a failure writes (see trace_merge.h).
void set_trace_path(const std::string& path);
// The host name dumps and errors carry: DDL_HOST (ddlrun --hosts), else gethostname.
std::string host_name();

}  // namespace ddl::dist::flight
