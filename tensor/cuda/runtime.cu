// CUDA runtime queries. Without a GPU, cudaGetDeviceCount fails (error 35,
// insufficient driver) and leaves the count untouched: treat any error as no GPU.
#include <cuda_runtime.h>

#include "tensor/cuda/runtime.h"

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

}  // namespace ddl::detail
