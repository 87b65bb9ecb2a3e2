// The device registry: the one place that knows which device types this build
// has. It is the only `#if DDL_HAVE_CUDA` outside tensor/cuda/.
#include "tensor/devices.h"

#include "ddl_config.h"
#include "tensor/allocator.h"

#if DDL_HAVE_CUDA
#include "tensor/cuda/runtime.h"
#endif

namespace ddl {

namespace cuda {
#if DDL_HAVE_CUDA
int device_count() { return detail::cuda_device_count(); }
#else
int device_count() { return 0; }
#endif
bool is_available() { return device_count() > 0; }
}  // namespace cuda

Allocator* allocator_for(Device d) {
  if (d.is_cpu()) return cpu::allocator();
#if DDL_HAVE_CUDA
  DDL_CHECK(cuda::device_count() > 0, "CUDA tensor requested on ", d,
            " but no GPU is available (ddl::cuda::device_count() == 0); use Device::cpu()");
  DDL_CHECK(d.index < cuda::device_count(), "CUDA device ", d, " does not exist; this machine has ",
            cuda::device_count(), " GPU(s)");
  DDL_CHECK(false, "CUDA tensor requested on ", d, ": this build's CUDA backend has no allocator yet");
#else
  DDL_CHECK(false, "CUDA tensor requested on ", d, " but ddl was built without CUDA (-Dcuda=disabled or no toolkit)");
#endif
  return nullptr;
}

void copy_between_devices(const Tensor& dst, const Tensor& src) {
  DDL_CHECK(false, "copy: moving data from ", src.device(), " to ", dst.device(), " is not supported in this build");
}

}  // namespace ddl
