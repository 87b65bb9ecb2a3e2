// Internal to tensor/cuda/ (includes CUDA headers; never include it from
// outside this folder): error checking, the current stream, device guards and
// launch shapes shared by every CUDA kernel file.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include <ddl/base/error.h>

namespace ddl::cuda::detail {

// Throws ddl::Error naming the failed call, its CUDA error string and the site.
void check(cudaError_t err, const char* what, const char* file, int line);

// The stream kernels on `device` are launched on: the stream set with
// ddl::cuda::set_current_stream, else the legacy default stream (nullptr).
cudaStream_t current_stream(int device);
void set_current_stream(int device, cudaStream_t stream);

// Makes `device` current for the guard's lifetime, restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ddl::cuda::detail

namespace ddl::detail {
// Tells the pinned-memory cache (tensor/cuda/pinned.cpp) that the page-locked block
// holding `ptr` is used by work queued so far on `stream`, so it is not reused
// before that work is done. No-op when ptr is not from Tensor::pin_memory().
void pinned_record_use(const void* ptr, cudaStream_t stream, int device);
}  // namespace ddl::detail

namespace ddl::cuda::detail {

// One thread per element for 1-D grid-stride kernels.
inline constexpr int kBlockThreads = 256;
inline unsigned int blocks_for(int64_t n) {
  const int64_t b = (n + kBlockThreads - 1) / kBlockThreads;
  return static_cast<unsigned int>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

}  // namespace ddl::cuda::detail

#define DDL_CUDA_CHECK(expr) ::ddl::cuda::detail::check((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: reports launch-configuration errors at the launch site.
#define DDL_CUDA_KERNEL_CHECK() DDL_CUDA_CHECK(cudaGetLastError())

namespace ddl::cuda::detail {

// An event owned by one scope: destroyed on every path out of it, throws included.
// Destroying an event whose record or waits are still queued is allowed (the
// runtime releases it once they complete).
class ScopedEvent {
 public:
  explicit ScopedEvent(unsigned int flags = cudaEventDisableTiming) {
    DDL_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
  }
  ~ScopedEvent() {
    if (event_) cudaEventDestroy(event_);
  }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Note [Deferred device errors]
// A kernel that finds bad input (a cross-entropy target outside [0, C)) cannot
// throw, and checking on the host would cost a device-to-host copy and a stream
// sync per call. Instead the kernel writes a DeviceErrorRecord into page-locked
// host memory mapped into the device (one per GPU) and the host raises it as a
// ddl::Error at the next synchronisation point on that GPU: a device-to-host
// copy (item(), to_vector, printing), cuda::synchronize, Stream::synchronize,
// Event::synchronize, or the next cross-entropy forward once the earlier kernel
// has run. This is how PyTorch's device-side asserts surface (at the next
// sync), minus the poisoned context: the error is raised once, then cleared,
// and the GPU stays usable. The first error wins until it is raised.
struct DeviceErrorRecord {
  int flag;  // written last (after a system fence): 1 when the fields below are valid
  int op;    // an index into the names registered with device_error_op_id
  int64_t index, value, inner, classes;
};

// The mapped record of `device` as the device addresses it (allocated on first use).
DeviceErrorRecord* device_error_record(int device);
// A small id for an op name (string kept on the host), for DeviceErrorRecord::op.
int device_error_op_id(const char* op);
// Throws the recorded error of `device`, if a kernel wrote one, and clears it.
void raise_device_errors(int device);

}  // namespace ddl::cuda::detail
