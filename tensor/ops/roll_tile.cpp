// roll and tile on Tensors (the shared templates are in roll_tile.h).
#include <ddl/tensor/ops/join.h>
#include <ddl/tensor/ops/roll_tile.h>
#include <ddl/tensor/ops/shape_ops.h>

namespace ddl {

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  DDL_CHECK(x.defined(), "roll: undefined tensor");
  return detail::roll_impl(x, shifts, dims);
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& reps) {
  DDL_CHECK(x.defined(), "tile: undefined tensor");
  return detail::tile_impl(x, reps);
}

}  // namespace ddl
