// Differentiable roll and tile (tensor/ops/roll_tile.h has the semantics): compositions of
// narrow, cat and repeat, so their double backward comes with them.
#pragma once

#include <cstdint>
#include <vector>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/ops/roll_tile.h>

namespace ddl {

Variable roll(const Variable& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
Variable tile(const Variable& x, const std::vector<int64_t>& reps);

}  // namespace ddl
