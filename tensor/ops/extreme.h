// The max/min reductions behind amax, argmax, x.max(), x.max(dim) and their
// gradients, with errors naming the op the user called (tensor/ops/reduce.cpp).
#pragma once

#include <vector>

#include <ddl/tensor/core/tensor.h>

namespace ddl::detail {

// amax/amin (arg = false) or argmax/argmin (arg = true) over `dims`; arg takes
// bool too (torch.max(x, dim) does, torch.argmax does not). A NaN wins.
Tensor extreme(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, bool is_max, bool arg, const char* op);

}  // namespace ddl::detail
