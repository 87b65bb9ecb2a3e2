// More reductions, as torch.prod / std / logsumexp / norm / all / any / equal. Built from the
// reductions in reduce.h, except prod, which runs on the CPU (a CUDA tensor round-trips through
// host memory). No accumulate-dtype options and no complex inputs.
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

// Product of every element (0-d) or along one dim; bool and integers accumulate in and return
// int64 (wrapping on overflow), as torch.prod. An empty product is 1.
Tensor prod(const Tensor& x);
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false);
// sqrt(var(x, dims, correction, keepdim)): floating point only, as torch.std.
Tensor std(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
// log(sum(exp(x))) over `dims` (empty = every dim), shifted by the row's max so it neither
// overflows nor underflows; integers and bool give float32, as torch.logsumexp.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
// The vector p-norm over `dims` (empty = every dim), as torch.norm / torch.linalg.vector_norm:
// p = 0 counts non-zeros, +-inf is the largest / smallest |x| (0 for an empty tensor), other p
// give sum(|x|^p)^(1/p); p = 2 is PyTorch's 'fro'. Floating point only; accumulates in float64.
Tensor norm(const Tensor& x, double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Whether every / any element is non-zero (NaN counts as non-zero), over all or one dim.
// bool result, except uint8 in, uint8 out, as torch.all and torch.any.
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
// True when a and b have the same shape and equal elements (after type promotion; NaN is
// unequal), as torch.equal. Both on one device.
bool equal(const Tensor& a, const Tensor& b);

namespace detail {
// dims wrapped into [0, ndim) (a 0-d tensor takes 0 or -1), refusing repeats; empty = every dim.
std::vector<int64_t> reduce_dims(const Shape& s, const std::vector<int64_t>& dims, const char* op);
// The result's shape for a reduction over `dims` as returned by reduce_dims.
Shape reduced_shape(const Shape& s, const std::vector<int64_t>& dims, bool keepdim);
}  // namespace detail

}  // namespace ddl
