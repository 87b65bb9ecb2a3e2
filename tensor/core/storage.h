// Storage: one refcounted block of device memory that tensors view.
// Owned blocks go back to their allocator; external blocks to a user deleter.
// It also counts in-place writes (version()), for autograd's saved-tensor checks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include <ddl/tensor/core/allocator.h>
#include <ddl/tensor/core/device.h>

namespace ddl {

class Storage {
 public:
  // Allocates `nbytes` from the device's allocator.
  Storage(size_t nbytes, Device device);
  // Wraps memory the caller owns; `deleter` (may be empty) runs when the last view dies.
  Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  // How many in-place writes this block has seen, shared by every view of it, as
  // PyTorch's tensor._version (c10's VariableVersion): autograd records it when an op
  // saves a tensor and refuses a backward that would read changed values.
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  // Called by every in-place op (copy_, fill_, add_, index_put_, ...) before it writes.
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_ = nullptr;
  std::function<void(void*)> deleter_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace ddl
