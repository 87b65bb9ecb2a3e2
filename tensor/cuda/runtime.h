// The CUDA backend's entry points for plain C++ callers (tensor/core/devices.cpp and
// tensor/core/tensor.cpp): no CUDA headers here. Implemented in tensor/cuda/*.cu;
// only called in builds with DDL_HAVE_CUDA.
#pragma once

#include <cstddef>

#include <ddl/tensor/core/allocator.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::detail {
// Number of usable GPUs; 0 when the driver is missing or reports an error.
int cuda_device_count();
// Throws ddl::Error naming `op` when no GPU is available or `device` is out of range.
void check_cuda_device(int device, const char* op);

// The caching allocator of one device (tensor/cuda/allocator.cpp).
Allocator* cuda_allocator(int device);
MemoryStats cuda_memory_stats(int device);
// Marks the allocator block starting at `block` as used by `stream` (a cudaStream_t).
void cuda_record_stream(void* block, int device, void* stream);
void cuda_empty_cache();
// empty_cache for one device only.
void cuda_empty_cache(int device);

// Page-locked host memory (tensor/cuda/pinned.cpp).
Allocator* cuda_pinned_allocator();
bool cuda_is_pinned(const void* ptr);

// CPU<->CUDA and CUDA<->CUDA copies (tensor/cuda/transfer.cpp).
void cuda_copy_between_devices(const Tensor& dst, const Tensor& src);
}  // namespace ddl::detail
