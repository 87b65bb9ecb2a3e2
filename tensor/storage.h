// Storage: one refcounted block of device memory that tensors view.
// Owned blocks go back to their allocator; external blocks to a user deleter.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "tensor/allocator.h"
#include "tensor/device.h"

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

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Allocator* allocator_ = nullptr;
  std::function<void(void*)> deleter_;
};

}  // namespace ddl
