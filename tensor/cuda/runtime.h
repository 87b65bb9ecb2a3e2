// CUDA runtime queries (no CUDA headers here: callers outside tensor/cuda/ include this).
#pragma once

namespace ddl::detail {
// Number of usable GPUs; 0 when the driver is missing or reports an error.
int cuda_device_count();
}  // namespace ddl::detail
