// Internal to tensor/cuda/: how kernels compute on the 16-bit floats (Note [Half
// compute] in tensor/core/half.h: load as float, compute in float, round once on store),
// and dtype dispatch that includes them.
#pragma once

#include <type_traits>

#include <ddl/tensor/core/dtype.h>
#include <ddl/tensor/core/half.h>

namespace ddl::cuda::detail {

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The type an element of T computes in: float for the 16-bit floats, T otherwise.
template <typename T>
using ComputeT = std::conditional_t<kIsHalf<T>, float, T>;

// Calls f(T{}) with T the C++ type of a float dtype, 16-bit ones included.
template <typename F>
void dispatch_float_and_half(DType t, const char* op, const F& f) {
  if (t == DType::Float16) return f(Half{});
  if (t == DType::BFloat16) return f(BFloat16{});
  DDL_DISPATCH_FLOAT(t, op, [&] { f(scalar_t{}); });
}

// Calls f(T{}) with T the C++ type of a numeric or 16-bit float dtype.
template <typename F>
void dispatch_numeric_and_half(DType t, const char* op, const F& f) {
  if (t == DType::Float16) return f(Half{});
  if (t == DType::BFloat16) return f(BFloat16{});
  DDL_DISPATCH_NUMERIC(t, op, [&] { f(scalar_t{}); });
}

}  // namespace ddl::cuda::detail
