// ShmAllReduce: all-reduce through one shared-memory segment when every rank of a group
// runs on the same host, as NCCL's SHM transport and MPI's shared-memory layers do. Over
// TCP loopback the kernel copies every byte twice; here each rank copies its tensor into
// the segment, reduces its 1/n share straight from every rank's copy, and copies the
// other shares back. Internal to ProcessGroupGloo, which keeps Gloo's TCP ring whenever
// the segment cannot be shared (ranks on several hosts, separate /dev/shm or pid
// namespaces) or DDL_SHM=0. See Note [Shared-memory all-reduce] in shm_all_reduce.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <ddl/dist/process_group.h>
#include <ddl/dist/store/store.h>
#include <ddl/dist/traffic.h>

namespace ddl::dist::detail {

// A peer died, aborted, or did not arrive in time (the group is broken afterwards).
class ShmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ShmHeader;

class ShmAllReduce {
 public:
  // Collective over `store`: every rank of the group calls it, with its own `enabled`.
  // Returns null on every rank, with the reason in *why, unless every rank is enabled and
  // maps the same segment; *failed (when given) says whether the reason is a fault rather
  // than the set-up (See Note [Why not shared memory] in shm_segment.cpp). Throws ddl::Error
  // only when a rank misses the store exchange.
  static std::unique_ptr<ShmAllReduce> connect(Store& store, int rank, int size, bool enabled, Millis timeout,
                                               std::string* why, bool* failed = nullptr);
  ~ShmAllReduce();
  ShmAllReduce(const ShmAllReduce&) = delete;
  ShmAllReduce& operator=(const ShmAllReduce&) = delete;

  // t ← op over every rank's t (contiguous CPU tensor). Every rank gets the same bits.
  // `tag`: the group's collective sequence number; ranks first check that they all call
  // with the same tag, numel, dtype and op. Throws ShmError when they do not, or when a
  // peer died, left, aborted or missed the deadline.
  Traffic all_reduce(const Tensor& t, ReduceOp op, uint64_t tag, Millis timeout);
  // Makes every pending and later call fail at once, on every rank (the group broke).
  void abort();

 private:
  using Clock = std::chrono::steady_clock;
  ShmAllReduce(void* base, size_t bytes, int rank, int size, size_t slot_bytes);
  char* slot(int set, int rank) const;
  void check_same_call(const Tensor& t, ReduceOp op, uint64_t tag, Clock::time_point deadline);
  Traffic move_pieces(const Tensor& t, ReduceOp op, Clock::time_point deadline);
  void barrier(Clock::time_point deadline);
  void wait_for(int peer, uint32_t gen, Clock::time_point deadline);
  bool peer_alive(int peer) const;

  void* base_;
  size_t bytes_;
  ShmHeader* header_;
  char* data_;
  int rank_;
  int size_;
  size_t slot_bytes_;
  uint32_t gen_ = 0;    // barriers passed; the same on every rank
  uint64_t round_ = 0;  // pieces reduced; its parity picks the buffer set
  uint64_t calls_ = 0;  // all_reduce calls; its parity picks the CallRecord
};

}  // namespace ddl::dist::detail
