// Storage allocation and release.
#include <ddl/tensor/core/storage.h>

namespace ddl {

Storage::Storage(size_t nbytes, Device device)
    : data_(nullptr), nbytes_(nbytes), device_(device), allocator_(allocator_for(device)) {
  data_ = allocator_->allocate(nbytes);
}

Storage::Storage(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (allocator_) {
    allocator_->deallocate(data_, nbytes_);
  } else if (deleter_) {
    deleter_(data_);
  }
}

}  // namespace ddl
