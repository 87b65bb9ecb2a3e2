// GatherBuffer: the memory one FSDP unit's full (gathered) parameters live in. Its
// address range is reserved once; freeing returns the physical pages to the OS
// (madvise MADV_DONTNEED) but keeps the range, so tensors autograd saved in forward
// still point at the right place when backward gathers the values into it again. This
// is PyTorch FSDP's storage().resize_(0) / resize_(n), done with the virtual memory
// system because ddl's Storage cannot change size. CPU only.
#pragma once

#include <cstdint>
#include <memory>

#include <ddl/tensor/core/tensor.h>

namespace ddl::dist::detail {

class GatherBuffer {
 public:
  // Reserves numel elements of dtype (zero pages: nothing resident yet).
  GatherBuffer(int64_t numel, DType dtype);
  GatherBuffer(const GatherBuffer&) = delete;
  GatherBuffer& operator=(const GatherBuffer&) = delete;

  // [numel]: what the parameters are views of while gathered (and what autograd saves).
  const Tensor& tensor() const { return tensor_; }
  // The same memory through a second Storage, for collectives to write into: their
  // version bump lands there, not on the storage autograd checks saved tensors against
  // (Note [Saved tensor versions] in autograd/node.cpp): refilling a freed buffer with
  // the very values forward saw is no modification.
  const Tensor& writable() const { return writable_; }
  // Gives the pages back; the contents read as zeros until written again.
  void release();
  // Bytes of the range now backed by physical memory (mincore).
  int64_t resident_bytes() const;
  int64_t nbytes() const { return nbytes_; }

 private:
  struct Region;
  std::shared_ptr<Region> region_;
  int64_t nbytes_ = 0;
  Tensor tensor_, writable_;
};

}  // namespace ddl::dist::detail
