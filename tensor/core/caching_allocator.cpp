// The caching allocator's bookkeeping: pools of free blocks, best-fit search,
// splitting and merging. See Note [Caching allocator] in caching_allocator.h.
#include <algorithm>
#include <cstdio>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/tensor/core/caching_allocator.h>

namespace ddl::detail {

std::string format_bytes(int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / (1 << 30));
  } else if (bytes >= (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", b / (1 << 20));
  } else if (bytes >= (int64_t{1} << 10)) {
    std::snprintf(buf, sizeof(buf), "%.2f KiB", b / (1 << 10));
  } else {
    std::snprintf(buf, sizeof(buf), "%lld bytes", static_cast<long long>(bytes));
  }
  return buf;
}

bool CachingAllocator::BySize::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
}

CachingAllocator::CachingAllocator(RawMemory* raw, std::string name) : raw_(raw), name_(std::move(name)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const PendingEvent& e : pending_) raw_->release_event(e.event);  // their blocks leak like live ones
  release_free_segments();
}

size_t CachingAllocator::round_size(size_t nbytes) {
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t CachingAllocator::segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

CachingAllocator::Block* CachingAllocator::find_free(size_t size, uintptr_t stream, bool small) {
  FreeSet& free = pool(small);
  Block key{nullptr, size, stream, small};
  auto it = free.lower_bound(&key);  // smallest block on this stream with size >= request
  if (it == free.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  free.erase(it);
  return b;
}

CachingAllocator::Block* CachingAllocator::new_segment(size_t size, uintptr_t stream, bool small) {
  const size_t seg = segment_size(size);
  void* p = raw_->alloc(seg);
  if (!p) {
    // Out of memory: wait for blocks held by other streams, give the cached segments back, try once more.
    process_events(true);
    release_free_segments();
    p = raw_->alloc(seg);
  }
  DDL_CHECK(p != nullptr, name_, ": out of memory: tried to allocate ", format_bytes(static_cast<int64_t>(size)), " (",
            size, " bytes, in a segment of ", format_bytes(static_cast<int64_t>(seg)), "); ", describe_usage(),
            ". Free tensors you no longer need or use a smaller batch");
  segments_ += 1;
  stats_.reserved_bytes += static_cast<int64_t>(seg);
  return new Block{static_cast<char*>(p), seg, stream, small};
}

void* CachingAllocator::allocate(size_t nbytes, uintptr_t stream) {
  if (nbytes == 0) return nullptr;
  const size_t size = round_size(nbytes);
  const bool small = size <= kSmallSize;
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending_.empty()) process_events(false);
  Block* b = find_free(size, stream, small);
  if (!b) b = new_segment(size, stream, small);
  // Split off the tail when it is worth keeping as its own free block.
  const size_t rest = b->size - size;
  if (small ? rest >= kMinBlockSize : rest > kSmallSize) {
    Block* tail = new Block{b->ptr + size, rest, stream, small};
    tail->prev = b;
    tail->next = b->next;
    if (b->next) b->next->prev = tail;
    b->next = tail;
    b->size = size;
    pool(small).insert(tail);
  }
  b->allocated = true;
  live_.emplace(b->ptr, b);
  stats_.allocated_bytes += static_cast<int64_t>(b->size);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  return b->ptr;
}

void CachingAllocator::deallocate(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  DDL_ASSERT(it != live_.end(), name_, ": freeing a pointer this allocator did not hand out");
  Block* b = it->second;
  live_.erase(it);
  stats_.allocated_bytes -= static_cast<int64_t>(b->size);
  if (b->stream_uses.empty()) {
    free_block(b);
    return;
  }
  // Used on other streams: reusable once the work queued there so far is done.
  // The block stays marked allocated, so neighbours do not merge with it meanwhile.
  for (uintptr_t s : b->stream_uses) {
    pending_.push_back({raw_->record_event(s), b});
    b->pending_events += 1;
  }
  b->stream_uses.clear();
}

void CachingAllocator::record_stream(void* ptr, uintptr_t stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  DDL_CHECK(it != live_.end(), name_, ": record_stream: the pointer is not a live block of this allocator");
  Block* b = it->second;
  if (stream == b->stream) return;  // its own stream orders every user already
  if (std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end())
    b->stream_uses.push_back(stream);
}

int64_t CachingAllocator::pending_free_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Block*> seen;
  for (const PendingEvent& e : pending_)
    if (std::find(seen.begin(), seen.end(), e.block) == seen.end()) seen.push_back(e.block);
  return static_cast<int64_t>(seen.size());
}

void CachingAllocator::process_events(bool wait) {
  std::deque<PendingEvent> still;
  for (PendingEvent& e : pending_) {
    if (wait) {
      raw_->wait_event(e.event);
    } else if (!raw_->event_done(e.event)) {
      still.push_back(e);
      continue;
    }
    raw_->release_event(e.event);
    if (--e.block->pending_events == 0) free_block(e.block);
  }
  pending_.swap(still);
}

void CachingAllocator::free_block(Block* b) {
  b->allocated = false;
  FreeSet& free = pool(b->small);
  // Merge with free neighbours in the segment (they share b's pool and stream).
  if (Block* p = b->prev; p && !p->allocated) {
    free.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (Block* n = b->next; n && !n->allocated) {
    free.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  free.insert(b);
}

void CachingAllocator::release_free_segments() {
  for (FreeSet* free : {&small_free_, &large_free_}) {
    std::vector<Block*> whole;
    for (Block* b : *free)
      if (!b->prev && !b->next) whole.push_back(b);  // the free block is its entire segment
    for (Block* b : whole) {
      free->erase(b);
      raw_->free(b->ptr);
      segments_ -= 1;
      stats_.reserved_bytes -= static_cast<int64_t>(b->size);
      delete b;
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  process_events(true);
  release_free_segments();
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
}

int64_t CachingAllocator::segment_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return segments_;
}

std::string CachingAllocator::describe_usage() const {
  return str_cat(format_bytes(stats_.allocated_bytes), " allocated by tensors, ", format_bytes(stats_.reserved_bytes),
                 " reserved by the caching allocator (", segments_, " segments) after releasing its free cache");
}

}  // namespace ddl::detail
