// GatherBuffer over an anonymous private mapping (mmap(2), madvise(2), mincore(2)).
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <ddl/dist/fsdp/gather_buffer.h>

namespace ddl::dist::detail {

struct GatherBuffer::Region {
  void* data = nullptr;
  size_t bytes = 0;
  ~Region() {
    if (data) munmap(data, bytes);
  }
};

namespace {
size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
}  // namespace

GatherBuffer::GatherBuffer(int64_t numel, DType dtype) {
  DDL_CHECK(numel > 0, "FullyShardedDataParallel: a unit's gather buffer needs at least one element, got ", numel);
  nbytes_ = numel * static_cast<int64_t>(dtype_size(dtype));
  region_ = std::make_shared<Region>();
  const size_t bytes = (static_cast<size_t>(nbytes_) + page_size() - 1) / page_size() * page_size();
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  DDL_CHECK(p != MAP_FAILED, "FullyShardedDataParallel: cannot reserve ", bytes,
            " bytes for a unit's gathered parameters: ", std::strerror(errno));
  region_->data = p;
  region_->bytes = bytes;
  // Each Storage keeps the region alive; the last one (or this buffer) unmaps it.
  auto make = [&] {
    auto keep = region_;
    auto storage = std::make_shared<Storage>(p, static_cast<size_t>(nbytes_), Device::cpu(),
                                             [keep](void*) mutable { keep.reset(); });
    return Tensor(std::move(storage), Shape{numel}, Strides{1}, 0, dtype);
  };
  tensor_ = make();
  writable_ = make();
}

void GatherBuffer::release() {
  const int rc = madvise(region_->data, region_->bytes, MADV_DONTNEED);
  DDL_CHECK(rc == 0, "FullyShardedDataParallel: madvise(MADV_DONTNEED) failed: ", std::strerror(errno));
}

int64_t GatherBuffer::resident_bytes() const {
  const size_t pages = region_->bytes / page_size();
  std::vector<unsigned char> vec(pages);
  const int rc = mincore(region_->data, region_->bytes, vec.data());
  DDL_CHECK(rc == 0, "FullyShardedDataParallel: mincore failed: ", std::strerror(errno));
  int64_t resident = 0;
  for (unsigned char v : vec) resident += (v & 1) ? static_cast<int64_t>(page_size()) : 0;
  return resident;
}

}  // namespace ddl::dist::detail
