// Indexing in LibTorch's style, t.index({Slice(), 0, None, Ellipsis, idx}), and
// the index-driven ops: index_select, index_add, gather, scatter(_add),
// masked_fill, nonzero. Integers, slices, None and Ellipsis give views; int64
// or bool index tensors ("advanced indexing", NumPy's rules) give copies.
// Every op runs on CPU and CUDA tensors (kernels in tensor/cpu/indexing.cpp and
// tensor/cuda/); index, src and values tensors must be on self's device, except
// that index() and index_put_() also take CPU index tensors, as PyTorch does.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

// None: a new axis of size 1 in an index list; also "no bound" in a Slice.
inline constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
// Ellipsis: as many full slices as needed to index every dim (at most one per list).
inline constexpr EllipsisIndexType Ellipsis{};

// Python's start:stop:step. Missing bounds default to the whole dim; negative
// bounds count from the end; the step must be positive (as in PyTorch).
struct Slice {
  Slice(std::optional<int64_t> start_ = std::nullopt, std::optional<int64_t> stop_ = std::nullopt,
        std::optional<int64_t> step_ = std::nullopt)
      : start(start_), stop(stop_), step(step_) {}
  std::optional<int64_t> start, stop, step;
};

// One entry of an index list: an integer, a Slice, None, Ellipsis or a tensor.
class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Tensor };
  // Any integer type (0, an int64_t, a size_t) selects one position; implicit, as in LibTorch.
  template <std::integral I>
  requires(!std::same_as<I, bool>) TensorIndex(I i)
      : kind_(Kind::Integer), integer_(static_cast<int64_t>(i)) {}  // NOLINT
  // A bool would silently select position 0 or 1; LibTorch reads it as a new axis (x[True]).
  TensorIndex(bool) = delete;
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}                // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}                     // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}              // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  Tensor tensor_;
};

// t[indices] (also t.index(indices)). Index tensors are int64 (values in [-n, n))
// or bool masks; several are broadcast together, as in NumPy.
Tensor index(const Tensor& t, const std::vector<TensorIndex>& indices);
// t[indices] = values (broadcast to the indexed shape), or += when accumulate
// (then repeated indices add up in index order; without it the last write wins, on
// every device: see Note [Deterministic scatter on CUDA]). Writes into t; returns t.
const Tensor& index_put_(const Tensor& t, const std::vector<TensorIndex>& indices, const Tensor& values,
                         bool accumulate = false);
const Tensor& index_put_(const Tensor& t, const std::vector<TensorIndex>& indices, double value);
// An out-of-place copy of t with index_put_ applied.
Tensor index_put(const Tensor& t, const std::vector<TensorIndex>& indices, const Tensor& values,
                 bool accumulate = false);

// Entries `index` (1-D int64 or int32, values in [0, n)) of t along dim.
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
// t with source's slices added at `index` along dim (repeats add up).
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source);

// out[i][j][k] = t[index[i][j][k]][j][k] for dim 0 (and likewise for other dims).
// index: int64, same number of dims as t, index.size(d) <= t.size(d) for d != dim.
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
// self[index[i][j][k]][j][k] = src[i][j][k] for dim 0; scatter_add sums instead of
// overwriting. index.size(d) <= src.size(d) for every d. Where indices repeat, the
// last write in row-major order of index wins (PyTorch leaves the winner unspecified),
// and scatter_add adds in that order, on CUDA too (Note [Deterministic scatter on CUDA]).
const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, double value);
const Tensor& scatter_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, double value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);

// t with `value` where the bool mask (broadcast against t) is true.
Tensor masked_fill(const Tensor& t, const Tensor& mask, double value);
const Tensor& masked_fill_(const Tensor& t, const Tensor& mask, double value);
// Coordinates of the nonzero elements, row-major order: int64 [count, t.dim()].
// On CUDA it waits for the device once, to learn the count (as PyTorch's does).
Tensor nonzero(const Tensor& t);

namespace detail {
// Throws, naming `op` and both tensors, unless `other` is defined and on t's device.
void require_same_device(const Tensor& t, const Tensor& other, const char* what, const char* op);
// Throws, naming `op`, when t has an expanded dim (stride 0, size > 1): an in-place
// scatter into it would write one element from several places (PyTorch refuses too).
void require_no_internal_overlap(const Tensor& t, const char* op);
// The smallest and largest value of a non-empty integer tensor. Reads them back to
// the host: on CUDA this waits for the device (PyTorch checks on the device instead).
std::pair<int64_t, int64_t> index_min_max(const Tensor& index);
// index_select for an index its caller built in [0, t.size(dim)) (flip, pad): the
// same result without the range check, so no host sync on CUDA.
Tensor index_select_in_range(const Tensor& t, int64_t dim, const Tensor& index);
// index_add for an index already checked in [0, t.size(dim)) (embedding's backward
// after its forward's check): no second host sync on CUDA.
Tensor index_add_in_range(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source);
}  // namespace detail

namespace kernels {
// out = self gathered along dim by index (shapes checked by the frontend).
using GatherFn = void(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index);
DDL_DECLARE_KERNEL(gather_kernel, GatherFn);
// self scattered from src along dim by index; accumulate adds.
using ScatterFn = void(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate);
DDL_DECLARE_KERNEL(scatter_kernel, ScatterFn);
// out[n, r...] = src[offsets[n] + r...]: src is a view of the non-indexed dims,
// offsets (int64 [N]) are element offsets from its start; out is [N, src.shape...].
using TakeFn = void(const Tensor& out, const Tensor& src, const Tensor& offsets);
DDL_DECLARE_KERNEL(take_kernel, TakeFn);
// The reverse: dst[offsets[n] + r...] = (or +=) values[n, r...], in order of n.
using PutFn = void(const Tensor& dst, const Tensor& offsets, const Tensor& values, bool accumulate);
DDL_DECLARE_KERNEL(put_kernel, PutFn);
// Coordinates (int64 [count, t.dim()], on t's device) of t's nonzero elements in
// row-major order; t is contiguous with at least one dim and one element.
using NonzeroFn = Tensor(const Tensor& t);
DDL_DECLARE_KERNEL(nonzero_kernel, NonzeroFn);
}  // namespace kernels

}  // namespace ddl
