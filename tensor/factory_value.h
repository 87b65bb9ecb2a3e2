// The checked conversion of a scalar argument to a tensor's dtype, shared by full
// (tensor/factory.cpp) and scatter / masked_fill (tensor/gather_scatter.cpp).
// Its own header so that factory.h, included nearly everywhere, stays unchanged.
#pragma once

#include "tensor/dtype.h"

namespace ddl::detail {

// Throws `op: value V cannot be converted to DTYPE without overflow` where PyTorch's
// checked scalar conversion (c10::checked_convert) does: NaN, inf or out-of-range
// values into an integer dtype, finite values beyond a float dtype's range. uint8
// also takes -255..-1 (wrapped), as an integer Scalar does there.
void check_value_fits(double value, DType dtype, const char* op);

}  // namespace ddl::detail
