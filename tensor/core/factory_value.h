// The checked conversion of a scalar argument to a tensor's dtype, shared by full
// (tensor/core/factory.cpp) and scatter / masked_fill (tensor/ops/gather_scatter.cpp).
// Its own header so that factory.h, included nearly everywhere, stays unchanged.
#pragma once

#include <cstdint>
#include <type_traits>

#include <ddl/tensor/core/dtype.h>

namespace ddl::detail {

// Throws `op: value V cannot be converted to DTYPE without overflow` where PyTorch's
// checked scalar conversion (c10::checked_convert) does: NaN, inf or out-of-range
// values into an integer dtype, finite values beyond a float dtype's range. uint8
// also takes -255..-1 (wrapped), as an integer Scalar does there.
void check_value_fits(double value, DType dtype, const char* op);

// A checked value as T. Integer dtypes go through int64 so that -1 wraps to 255 in uint8
// as PyTorch's does; converting a negative double straight to an unsigned type is
// undefined behaviour (C++20 [conv.fpint]).
template <typename T>
T value_as(double value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return static_cast<T>(static_cast<int64_t>(value));
  else
    return static_cast<T>(value);
}

}  // namespace ddl::detail
