// Element and byte counts checked for int64 overflow, and the allocations that
// use them with the name of the op the user called (factories, matmul, pad).
// Shape::numel() checks the same way but can only name itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include <ddl/tensor/core/factory.h>

namespace ddl {

// The product of the extents, or a ddl::Error naming `op` and the shape when a
// partial product overflows int64 (PyTorch's "numel: integer multiplication
// overflow": checked left to right, so [2^32, 2^32, 0] is refused too).
int64_t checked_numel(const Shape& shape, const char* op);
// numel * itemsize: the bytes a contiguous tensor of `shape` needs, checked the same way.
int64_t checked_nbytes(const Shape& shape, size_t itemsize, const char* op);

namespace detail {
// empty/full for the factory or op `op`: a negative extent, or a shape whose
// element or byte count overflows int64, is a ddl::Error naming `op`.
Tensor empty(const char* op, const Shape& shape, TensorOptions opts);
Tensor full(const char* op, const Shape& shape, double value, TensorOptions opts);
}  // namespace detail

}  // namespace ddl
