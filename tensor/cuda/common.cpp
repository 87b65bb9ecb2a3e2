// Error checking, per-device current streams and the device guard.
#include <mutex>
#include <unordered_map>

#include <ddl/tensor/cuda/common.h>

namespace ddl::cuda::detail {

void check(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  ::ddl::detail::throw_error(
      file, line,
      ::ddl::detail::str_cat("CUDA: ", what, " failed: ", cudaGetErrorString(err), " (", static_cast<int>(err), ")"));
}

namespace {
// Per thread, as in PyTorch: a stream set on one thread does not redirect another's kernels.
thread_local std::unordered_map<int, cudaStream_t> current_streams;
}  // namespace

cudaStream_t current_stream(int device) {
  auto it = current_streams.find(device);
  return it == current_streams.end() ? nullptr : it->second;
}

void set_current_stream(int device, cudaStream_t stream) { current_streams[device] = stream; }

DeviceGuard::DeviceGuard(int device) {
  DDL_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) DDL_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

}  // namespace ddl::cuda::detail
