// set_current_device's and current_device()'s GPU part in a build without CUDA: no GPU.
#include <ddl/base/error.h>
#include <ddl/tensor/core/device.h>

namespace ddl::detail {

void cuda_set_current_device(int index) {
  DDL_CHECK(false, "set_current_device(cuda:", index, "): ddl was built without CUDA (-Dcuda=disabled or no toolkit)");
}

int cuda_current_device() { return -1; }

}  // namespace ddl::detail
