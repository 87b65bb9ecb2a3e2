// Device-independent bookkeeping of a caching allocator, after PyTorch's
// CUDACachingAllocator but simplified: no size limits, no expandable segments;
// cross-stream use is tracked with events only for blocks marked by record_stream. Plain C++ over a RawMemory
// interface, so the CUDA allocator (tensor/cuda/allocator.cpp) and the unit tests share one logic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <ddl/tensor/core/allocator.h>

namespace ddl::detail {

// Where segments come from (cudaMalloc/cudaFree for CUDA, a fake in tests).
class RawMemory {
 public:
  virtual ~RawMemory() = default;
  // Returns nullptr when out of memory; throws ddl::Error on other failures.
  virtual void* alloc(size_t nbytes) = 0;
  virtual void free(void* ptr) = 0;
  // For record_stream: an event marking the work queued so far on `stream`, whether it
  // has completed, a blocking wait for it, and its release. The defaults suit memory
  // without streams (nothing is ever pending).
  virtual void* record_event(uintptr_t /*stream*/) { return nullptr; }
  virtual bool event_done(void* /*event*/) { return true; }
  virtual void wait_event(void* /*event*/) {}
  virtual void release_event(void* /*event*/) {}
};

// Note [Caching allocator]
// Requests are rounded up to 512 B. Requests up to 1 MiB come from the small
// pool, carved out of 2 MiB segments; larger ones from the large pool, whose
// segments are 20 MiB for requests under 10 MiB and the request rounded up to
// 2 MiB otherwise. Free blocks are kept per (pool, stream), ordered by size:
// a request takes the smallest free block that fits (best fit) on its own
// stream, split when the rest is worth keeping (>= 512 B in the small pool,
// > 1 MiB in the large). A freed block merges with free neighbours of its
// segment. Memory is reused only by the stream it was allocated on, so work
// queued on that stream is ordered before the next user. A block also used on
// other streams is marked with record_stream(ptr, stream) (PyTorch's
// Tensor.record_stream): when it is freed, an event is recorded on each of those
// streams and the block returns to its pool only once they all completed
// (checked at the next allocate; waited for on out-of-memory and empty_cache).
// When RawMemory runs out, every fully free segment is released and the
// request retried once.
class CachingAllocator {
 public:
  static constexpr size_t kMinBlockSize = 512;
  static constexpr size_t kSmallSize = size_t{1} << 20;       // largest small-pool request
  static constexpr size_t kSmallBuffer = size_t{2} << 20;     // small-pool segment
  static constexpr size_t kLargeBuffer = size_t{20} << 20;    // segment for 1–10 MiB requests
  static constexpr size_t kMinLargeAlloc = size_t{10} << 20;  // from here, a segment per request
  static constexpr size_t kRoundLarge = size_t{2} << 20;

  // `raw` must outlive the allocator; `name` ("cuda:0") prefixes error messages.
  CachingAllocator(RawMemory* raw, std::string name);
  // Releases the cached segments; live blocks are leaked (their owners outlive us).
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `nbytes` usable on `stream`; nullptr for 0 bytes.
  void* allocate(size_t nbytes, uintptr_t stream = 0);
  // Returns a pointer from allocate() to the cache; nullptr is ignored. A block
  // with recorded streams is reusable only once their work queued so far is done.
  void deallocate(void* ptr);
  // Marks the live block at `ptr` (from allocate) as used by work queued on `stream`;
  // no-op for its own stream. See Note [Caching allocator].
  void record_stream(void* ptr, uintptr_t stream);
  // Freed blocks still waiting for other streams' work.
  int64_t pending_free_count() const;
  // allocated and peak count rounded block sizes; reserved counts segments.
  MemoryStats stats() const;
  void reset_peak();
  // Releases every segment none of whose memory is allocated.
  void empty_cache();
  int64_t segment_count() const;

  static size_t round_size(size_t nbytes);
  static size_t segment_size(size_t rounded);

 private:
  struct Block {
    char* ptr;
    size_t size;
    uintptr_t stream;
    bool small;
    bool allocated = false;  // also true while a freed block waits for its events
    Block* prev = nullptr;   // neighbours within the same segment
    Block* next = nullptr;
    std::vector<uintptr_t> stream_uses = {};  // other streams recorded by record_stream
    int pending_events = 0;
  };
  struct PendingEvent {
    void* event;
    Block* block;
  };
  struct BySize {  // (stream, size, address): best fit is one lower_bound away
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreeSet = std::set<Block*, BySize>;

  FreeSet& pool(bool small) { return small ? small_free_ : large_free_; }
  Block* find_free(size_t size, uintptr_t stream, bool small);
  Block* new_segment(size_t size, uintptr_t stream, bool small);
  void release_free_segments();
  // Merges a no-longer-used block with free neighbours and returns it to its pool.
  void free_block(Block* b);
  // Returns the blocks whose events all completed (all of them, waiting, when `wait`).
  void process_events(bool wait);
  std::string describe_usage() const;

  RawMemory* raw_;
  std::string name_;
  mutable std::mutex mu_;
  FreeSet small_free_, large_free_;
  std::unordered_map<void*, Block*> live_;
  std::deque<PendingEvent> pending_;  // in recording order
  MemoryStats stats_;
  int64_t segments_ = 0;
};

// "1.50 MiB" for error messages.
std::string format_bytes(int64_t bytes);

}  // namespace ddl::detail
