// torch.roll and torch.tile, written once for Tensors and Variables (autograd/ops/roll_tile.h):
// roll is a cat of two narrows per dim and tile a repeat, so both are differentiable as they are.
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/tensor/core/shape.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

// Shifts elements along `dims` by `shifts` (one shift per dim), wrapping around; with no dims,
// rolls the flattened tensor by the one shift and restores the shape.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
// Repeats x `reps[i]` times along dim i; fewer reps than dims are padded with leading 1s, more
// add leading dims (torch.tile, unlike repeat, accepts either).
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps);

namespace detail {

template <typename T>
T roll_impl(const T& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  DDL_CHECK(!shifts.empty(), "roll: `shifts` required");
  if (dims.empty()) {
    DDL_CHECK(shifts.size() == 1, "roll: shifts and dimensions must align, shifts: ", shifts.size(), ", dims: 0");
    return roll_impl(x.reshape({x.numel()}), shifts, {0}).reshape(x.shape());
  }
  DDL_CHECK(shifts.size() == dims.size(), "roll: shifts and dimensions must align, shifts: ", shifts.size(),
            ", dims: ", dims.size());
  DDL_CHECK(x.dim() > 0, "roll: dimension specified as ", dims[0], " but tensor has no dimensions");
  T out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], x.dim(), "roll");
    const int64_t n = x.size(d);
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    // the last s elements move to the front
    out = cat(std::vector<T>{out.narrow(d, n - s, s), out.narrow(d, 0, n - s)}, d);
  }
  return out;
}

template <typename T>
T tile_impl(const T& x, const std::vector<int64_t>& reps) {
  for (int64_t r : reps) DDL_CHECK(r >= 0, "tile: negative repetition ", r, " in reps of ", x.shape());
  std::vector<int64_t> r = reps;
  while (static_cast<int64_t>(r.size()) < x.dim()) r.insert(r.begin(), 1);
  return repeat(x, r);
}

}  // namespace detail
}  // namespace ddl
