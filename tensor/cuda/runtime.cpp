// CUDA runtime queries. Without a GPU, cudaGetDeviceCount fails (error 35,
// insufficient driver) and leaves the count untouched: treat any error as no GPU.
#include <cuda_runtime.h>

#include <ddl/tensor/cuda/runtime.h>

namespace ddl::detail {

int cuda_device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky error
      return 0;
    }
    return n;
  }();
  return count;
}

void check_cuda_device(int device, const char* op) {
  const int n = cuda_device_count();
  DDL_CHECK(n > 0, op, ": CUDA device cuda:", device,
            " requested but no GPU is available (ddl::cuda::device_count() == 0); use Device::cpu()");
  DDL_CHECK(device >= 0 && device < n, op, ": CUDA device cuda:", device, " does not exist; this machine has ", n,
            " GPU(s)");
}

}  // namespace ddl::detail
