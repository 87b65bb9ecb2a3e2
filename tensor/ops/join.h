// Joining and splitting along a dim, with PyTorch's semantics: cat and stack
// copy into a new tensor (dtypes promoted, any device that has a copy kernel);
// split and chunk return views of their input, no data is copied.
// Not here: differentiable forms (autograd/ops/join.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl {

// Joins tensors along an existing dim. All must have the same number of dims and
// the same extents except along `dim`; 1-D empty tensors are skipped, as in torch.cat.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Joins equal-shaped tensors along a new dim inserted at `dim` (in [-ndim-1, ndim]).
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Braced lists of tensors, cat({a, b}), pick these even where the Variable overloads
// (autograd/ops/join.h) are visible too.
Tensor cat(std::initializer_list<Tensor> tensors, int64_t dim = 0);
Tensor stack(std::initializer_list<Tensor> tensors, int64_t dim = 0);

// Views of consecutive pieces of `split_size` elements along `dim`; the last may be shorter.
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0);
// Views of pieces with the given extents along `dim`; they must add up to t.size(dim).
std::vector<Tensor> split(const Tensor& t, const std::vector<int64_t>& split_sizes, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& t, const std::vector<int64_t>& split_sizes, int64_t dim = 0);
// At most `chunks` views of ceil(size / chunks) elements along `dim` (fewer when they run out).
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);

}  // namespace ddl
