// Page-locked host memory for Tensor::pin_memory(): cudaHostAlloc blocks cached
// by power-of-two size. A block that fed an asynchronous copy is reused only
// after that copy is done (an event per use, as in PyTorch's CachingHostAllocator).
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/runtime.h>

namespace ddl::detail {
namespace {

size_t round_pow2(size_t n) {
  size_t s = 512;
  while (s < n) s <<= 1;
  return s;
}

class PinnedAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    DDL_CHECK(cuda_device_count() > 0,
              "pin_memory: page-locked memory needs a GPU, but none is available (ddl::cuda::device_count() == 0)");
    const size_t size = round_pow2(nbytes);
    std::lock_guard<std::mutex> lock(mu_);
    process_events();
    auto& cached = free_[size];
    if (!cached.empty()) {
      void* p = cached.back();
      cached.pop_back();
      blocks_.at(p).allocated = true;
      return p;
    }
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release_cached();
      err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    }
    DDL_CUDA_CHECK(err);
    blocks_.emplace(p, Block{size, true, {}});
    return p;
  }

  // No CUDA call here unless events are pending (safe at exit in the common case).
  void deallocate(void* ptr, size_t) override {
    if (!ptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    Block& b = blocks_.at(ptr);
    b.allocated = false;
    if (b.events.empty()) {
      free_[b.size].push_back(ptr);
    } else {
      pending_.push_back(ptr);
    }
  }

  void record_use(const void* ptr, cudaStream_t stream, int device) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find(ptr);
    if (it == blocks_.end()) return;  // not ours: nothing to protect
    // Drop the block's finished events first: a long-lived pinned buffer uploaded
    // every step would otherwise collect one event per upload until it is freed.
    drop_completed(it->second);
    cuda::detail::DeviceGuard g(device);
    cudaEvent_t e = nullptr;
    DDL_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    it->second.events.push_back(e);
    DDL_CUDA_CHECK(cudaEventRecord(e, stream));
  }

  bool contains(const void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    return find(ptr) != blocks_.end();
  }

 private:
  struct Block {
    size_t size;
    bool allocated;
    std::vector<cudaEvent_t> events;  // copies still reading or writing the block
  };

  // The block whose [base, base + size) holds ptr.
  std::map<void*, Block>::iterator find(const void* ptr) {
    auto it = blocks_.upper_bound(const_cast<void*>(ptr));
    if (it == blocks_.begin()) return blocks_.end();
    --it;
    const char* base = static_cast<const char*>(it->first);
    return static_cast<const char*>(ptr) < base + it->second.size ? it : blocks_.end();
  }

  // Destroys and removes the block's events whose copies have finished (order of
  // events does not matter; the vector stays valid if a CUDA call throws).
  void drop_completed(Block& b) {
    for (size_t i = 0; i < b.events.size();) {
      const cudaError_t err = cudaEventQuery(b.events[i]);
      if (err == cudaErrorNotReady) {
        cudaGetLastError();  // not an error: clear it
        ++i;
        continue;
      }
      DDL_CUDA_CHECK(err);
      cudaEvent_t done = b.events[i];
      b.events[i] = b.events.back();
      b.events.pop_back();
      DDL_CUDA_CHECK(cudaEventDestroy(done));
    }
  }

  // Moves freed blocks whose copies have all finished to the free lists.
  void process_events() {
    std::vector<void*> still;
    for (void* p : pending_) {
      Block& b = blocks_.at(p);
      drop_completed(b);
      if (b.events.empty()) {
        free_[b.size].push_back(p);
      } else {
        still.push_back(p);
      }
    }
    pending_ = std::move(still);
  }

  void release_cached() {
    for (auto& [size, ptrs] : free_) {
      for (void* p : ptrs) {
        DDL_CUDA_CHECK(cudaFreeHost(p));
        blocks_.erase(p);
      }
      ptrs.clear();
    }
  }

  std::mutex mu_;
  std::map<void*, Block> blocks_;  // every block, live or cached
  std::map<size_t, std::vector<void*>> free_;
  std::vector<void*> pending_;  // freed, but copies may still use them
};

// Leaked on purpose, like the device allocators (pinned tensors may die after main).
PinnedAllocator& instance() {
  static auto* a = new PinnedAllocator();
  return *a;
}

}  // namespace

Allocator* cuda_pinned_allocator() { return &instance(); }
bool cuda_is_pinned(const void* ptr) { return instance().contains(ptr); }
void pinned_record_use(const void* ptr, cudaStream_t stream, int device) { instance().record_use(ptr, stream, device); }

}  // namespace ddl::detail
