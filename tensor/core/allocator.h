// Memory for tensor storage. Each device type has one Allocator; the CPU one
// returns 64-byte aligned blocks and keeps freed large blocks for reuse, so a
// training step does not fault fresh pages from the OS every iteration.
#pragma once

#include <cstddef>
#include <cstdint>

#include <ddl/tensor/core/device.h>

namespace ddl {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
};

struct MemoryStats {
  int64_t allocated_bytes = 0;  // held by live tensors
  int64_t reserved_bytes = 0;   // allocated plus cached for reuse
  int64_t peak_allocated_bytes = 0;
};

namespace cpu {
Allocator* allocator();
MemoryStats memory_stats();
// Returns cached blocks to the OS.
void empty_cache();
}  // namespace cpu

// The allocator registered for a device (see tensor/core/devices.cpp).
Allocator* allocator_for(Device d);

}  // namespace ddl
