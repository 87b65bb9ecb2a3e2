// The CUDA allocator: one CachingAllocator per device over cudaMalloc/cudaFree
// (see Note [Caching allocator] in tensor/core/caching_allocator.h). Blocks belong to
// the stream that was current when they were allocated; record_stream adds others.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ddl/tensor/core/caching_allocator.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/runtime.h>

namespace ddl::detail {
namespace {

class CudaRawMemory final : public RawMemory {
 public:
  explicit CudaRawMemory(int device) : device_(device) {}
  void* alloc(size_t nbytes) override {
    cuda::detail::DeviceGuard g(device_);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it: the caller frees its cache and retries
      return nullptr;
    }
    DDL_CUDA_CHECK(err);
    return p;
  }
  void free(void* ptr) override {
    cuda::detail::DeviceGuard g(device_);
    // Only whole free segments come here, but kernels queued on any stream may still
    // touch them (a block is free as soon as its tensor dies): drain the device first.
    DDL_CUDA_CHECK(cudaDeviceSynchronize());
    DDL_CUDA_CHECK(cudaFree(ptr));
  }
  // record_stream's events. These run from tensor destructors, so they never throw:
  // when recording fails (the runtime is shutting down) the device is drained instead.
  void* record_event(uintptr_t stream) override {
    cuda::detail::DeviceGuard g(device_);
    cudaEvent_t e = nullptr;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess &&
        cudaEventRecord(e, reinterpret_cast<cudaStream_t>(stream)) == cudaSuccess)
      return e;
    cudaGetLastError();
    if (e) cudaEventDestroy(e);
    cudaDeviceSynchronize();
    cudaGetLastError();
    return nullptr;
  }
  bool event_done(void* event) override {
    if (!event) return true;
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaSuccess) return true;
    cudaGetLastError();  // not ready, or a failure: keep waiting only when not ready
    return err != cudaErrorNotReady;
  }
  void wait_event(void* event) override {
    if (event && cudaEventSynchronize(static_cast<cudaEvent_t>(event)) != cudaSuccess) cudaGetLastError();
  }
  void release_event(void* event) override {
    if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }

 private:
  int device_;
};

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int device) : device_(device), raw_(device), cache_(&raw_, "cuda:" + std::to_string(device)) {}
  void* allocate(size_t nbytes) override {
    const auto stream = reinterpret_cast<uintptr_t>(cuda::detail::current_stream(device_));
    return cache_.allocate(nbytes, stream);
  }
  // No CUDA call here: freeing a tensor only updates the books (safe at exit).
  void deallocate(void* ptr, size_t) override { cache_.deallocate(ptr); }
  CachingAllocator& cache() { return cache_; }

 private:
  int device_;
  CudaRawMemory raw_;
  CachingAllocator cache_;
};

// One allocator per device, made on first use and leaked on purpose: tensors in
// static objects may be freed after main returns, when the CUDA runtime is gone.
CudaAllocator& instance(int device) {
  static std::once_flag once;
  static std::vector<CudaAllocator*>* allocators = nullptr;
  std::call_once(once, [] {
    allocators = new std::vector<CudaAllocator*>();
    for (int d = 0; d < cuda_device_count(); ++d) allocators->push_back(new CudaAllocator(d));
  });
  check_cuda_device(device, "cuda allocator");
  return *(*allocators)[static_cast<size_t>(device)];
}

}  // namespace

Allocator* cuda_allocator(int device) { return &instance(device); }
void cuda_record_stream(void* block, int device, void* stream) {
  instance(device).cache().record_stream(block, reinterpret_cast<uintptr_t>(stream));
}
MemoryStats cuda_memory_stats(int device) { return instance(device).cache().stats(); }
void cuda_empty_cache() {
  for (int d = 0; d < cuda_device_count(); ++d) instance(d).cache().empty_cache();
}
void cuda_empty_cache(int device) { instance(device).cache().empty_cache(); }

}  // namespace ddl::detail
