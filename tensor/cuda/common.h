// Internal to tensor/cuda/ (includes CUDA headers; never include it from
// outside this folder): error checking, the current stream, device guards and
// launch shapes shared by every CUDA kernel file.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tensor/error.h"

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
// Tells the pinned-memory cache (tensor/cuda/pinned.cu) that the page-locked block
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
