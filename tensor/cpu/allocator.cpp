// The CPU allocator: 64-byte aligned blocks; freed blocks of 64 KiB or more are
// cached by exact rounded size and handed out again, up to a cap, because a
// training step frees and reallocates the same activation sizes every iteration.
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/tensor/core/allocator.h>

namespace ddl::cpu {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kCacheMinBytes = size_t{64} << 10;
constexpr size_t kCacheCapBytes = size_t{4} << 30;

size_t round_up(size_t n) { return (std::max<size_t>(n, 1) + kAlignment - 1) / kAlignment * kAlignment; }

class CachingCpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    const size_t size = round_up(nbytes);
    if (size >= kCacheMinBytes) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_ -= static_cast<int64_t>(size);
        note_alloc(size);
        return p;
      }
    }
    void* p = std::aligned_alloc(kAlignment, size);
    if (!p) {
      empty_cache();
      p = std::aligned_alloc(kAlignment, size);
    }
    DDL_CHECK(p != nullptr, "cpu allocator: out of memory allocating ", nbytes, " bytes");
    std::lock_guard<std::mutex> lock(mu_);
    note_alloc(size);
    return p;
  }

  void deallocate(void* ptr, size_t nbytes) override {
    if (!ptr) return;
    const size_t size = round_up(nbytes);
    std::lock_guard<std::mutex> lock(mu_);
    allocated_ -= static_cast<int64_t>(size);
    if (size >= kCacheMinBytes && cached_ + static_cast<int64_t>(size) <= static_cast<int64_t>(kCacheCapBytes)) {
      free_[size].push_back(ptr);
      cached_ += static_cast<int64_t>(size);
      return;
    }
    std::free(ptr);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, blocks] : free_)
      for (void* p : blocks) std::free(p);
    free_.clear();
    cached_ = 0;
  }

  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return {allocated_, allocated_ + cached_, peak_};
  }

 private:
  void note_alloc(size_t size) {
    allocated_ += static_cast<int64_t>(size);
    peak_ = std::max(peak_, allocated_);
  }

  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  int64_t allocated_ = 0, cached_ = 0, peak_ = 0;
};

CachingCpuAllocator& instance() {
  // Leaked on purpose: tensors in static objects may be freed after main returns.
  static auto* a = new CachingCpuAllocator();
  return *a;
}

}  // namespace

Allocator* allocator() { return &instance(); }
MemoryStats memory_stats() { return instance().stats(); }
void empty_cache() { instance().empty_cache(); }

}  // namespace ddl::cpu
