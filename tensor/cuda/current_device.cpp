// ddl::set_current_device for a GPU (tensor/core/device.h): cudaSetDevice on the calling
// thread, which also creates that GPU's primary context there and not on cuda:0
// (https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__DEVICE.html).
#include <ddl/tensor/core/device.h>
#include <ddl/tensor/cuda/common.h>
#include <ddl/tensor/cuda/runtime.h>

namespace ddl::detail {

void cuda_set_current_device(int index) {
  check_cuda_device(index, "set_current_device");
  DDL_CUDA_CHECK(cudaSetDevice(index));
}

int cuda_current_device() {
  if (cuda_device_count() == 0) return -1;
  int index = 0;
  DDL_CUDA_CHECK(cudaGetDevice(&index));  // no context is created
  return index;
}

}  // namespace ddl::detail
