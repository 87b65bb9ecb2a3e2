// roll and tile on Variables: the templates of tensor/ops/roll_tile.h over Variable ops.
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/roll_tile.h>
#include <ddl/autograd/ops/shape_ops.h>

namespace ddl {

Variable roll(const Variable& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  return detail::roll_impl(x, shifts, dims);
}

Variable tile(const Variable& x, const std::vector<int64_t>& reps) { return detail::tile_impl(x, reps); }

}  // namespace ddl
