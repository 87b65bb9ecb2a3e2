// Which devices exist in this build and at run time, and moving data between them.
#pragma once

#include "tensor/tensor.h"

namespace ddl {

namespace cuda {
// False when the build has no CUDA backend or no GPU/driver is usable at run time.
bool is_available();
int device_count();
}  // namespace cuda

// Copies between tensors on different devices (same shape; dst contiguous or not).
void copy_between_devices(const Tensor& dst, const Tensor& src);

}  // namespace ddl
