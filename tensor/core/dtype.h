// Element types. float32 is first-class; float64 serves gradient checks;
// int64 holds labels and indices; uint8 images; bool comparison results;
// int8, int16 and int32 are the other integer dtypes of PyTorch (quantised data, audio).
// float16/bfloat16 (tensor/core/half.h) are storage types for mixed precision: copies
// convert them, most ops compute in float32 and round once (docs/mixed_precision.md).
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>

#include <ddl/base/error.h>
#include <ddl/tensor/core/half.h>

namespace ddl {

// New dtypes go at the end: ranks compare the enum's values across processes (dist/transport).
enum class DType : uint8_t { Float32, Float64, Int64, Int32, UInt8, Bool, Float16, BFloat16, Int8, Int16 };

inline constexpr int kNumDTypes = 10;

// LibTorch's spellings of the dtypes (torch::kFloat, torch::kLong, ...).
inline constexpr DType kFloat32 = DType::Float32, kFloat = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64, kDouble = DType::Float64;
inline constexpr DType kInt64 = DType::Int64, kLong = DType::Int64;
inline constexpr DType kInt32 = DType::Int32, kInt = DType::Int32;
inline constexpr DType kUInt8 = DType::UInt8, kByte = DType::UInt8;
inline constexpr DType kBool = DType::Bool;
inline constexpr DType kFloat16 = DType::Float16, kHalf = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kInt16 = DType::Int16, kShort = DType::Int16;
inline constexpr DType kInt8 = DType::Int8, kChar = DType::Int8;

size_t dtype_size(DType t);
const char* dtype_name(DType t);
bool is_floating(DType t);
// uint8, int8, int16, int32 or int64 (not bool).
bool is_integral(DType t);
// The smallest and largest value of an integral dtype, as doubles; int64's largest, 2^63 - 1, is none, so it
// gives 2^63 (an exclusive bound there, inclusive for the others).
std::pair<double, double> integral_range(DType t);
// float16 or bfloat16: the 16-bit types that compute in float32 (see Note [Half compute]).
inline bool is_reduced_float(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
std::ostream& operator<<(std::ostream& os, DType t);

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::Float64;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::Int16;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct DTypeOf<Half> {
  static constexpr DType value = DType::Float16;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::BFloat16;
};
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

// Type promotion as PyTorch does for tensor-tensor ops (torch.promote_types): bool < uint8, int8 < int16 < int32 <
// int64 < float16, bfloat16 < float32 < float64, where uint8 with int8 gives int16 and float16 with bfloat16 float32.
DType promote_types(DType a, DType b);

}  // namespace ddl

// Runs the body with `scalar_t` bound to the C++ type of `dtype`.
#define DDL_DTYPE_CASE(enum_value, type, ...) \
  case ::ddl::DType::enum_value: {            \
    using scalar_t = type;                    \
    __VA_ARGS__();                            \
    break;                                    \
  }

#define DDL_DISPATCH_FLOAT(dtype, op_name, ...)                                           \
  [&] {                                                                                   \
    switch (dtype) {                                                                      \
      DDL_DTYPE_CASE(Float32, float, __VA_ARGS__)                                         \
      DDL_DTYPE_CASE(Float64, double, __VA_ARGS__)                                        \
      default:                                                                            \
        DDL_CHECK(false, op_name, ": expected a float32 or float64 tensor, got ", dtype); \
    }                                                                                     \
  }()

#define DDL_DISPATCH_ALL(dtype, op_name, ...)                                \
  [&] {                                                                      \
    switch (dtype) {                                                         \
      DDL_DTYPE_CASE(Float32, float, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Float64, double, __VA_ARGS__)                           \
      DDL_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Int8, int8_t, __VA_ARGS__)                              \
      DDL_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Bool, bool, __VA_ARGS__)                                \
      default:                                                               \
        DDL_CHECK(false, op_name, ": dtype ", dtype, " has no kernels yet"); \
    }                                                                        \
  }()

// DDL_DISPATCH_ALL plus the 16-bit floats: for data movement (copy, fill, item).
#define DDL_DISPATCH_ALL_AND_HALF(dtype, op_name, ...)                       \
  [&] {                                                                      \
    switch (dtype) {                                                         \
      DDL_DTYPE_CASE(Float32, float, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Float64, double, __VA_ARGS__)                           \
      DDL_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Int8, int8_t, __VA_ARGS__)                              \
      DDL_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)                            \
      DDL_DTYPE_CASE(Bool, bool, __VA_ARGS__)                                \
      DDL_DTYPE_CASE(Float16, ::ddl::Half, __VA_ARGS__)                      \
      DDL_DTYPE_CASE(BFloat16, ::ddl::BFloat16, __VA_ARGS__)                 \
      default:                                                               \
        DDL_CHECK(false, op_name, ": dtype ", dtype, " has no kernels yet"); \
    }                                                                        \
  }()

#define DDL_DISPATCH_NUMERIC(dtype, op_name, ...)                              \
  [&] {                                                                        \
    switch (dtype) {                                                           \
      DDL_DTYPE_CASE(Float32, float, __VA_ARGS__)                              \
      DDL_DTYPE_CASE(Float64, double, __VA_ARGS__)                             \
      DDL_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                              \
      DDL_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                              \
      DDL_DTYPE_CASE(Int16, int16_t, __VA_ARGS__)                              \
      DDL_DTYPE_CASE(Int8, int8_t, __VA_ARGS__)                                \
      DDL_DTYPE_CASE(UInt8, uint8_t, __VA_ARGS__)                              \
      default:                                                                 \
        DDL_CHECK(false, op_name, ": expected a numeric tensor, got ", dtype); \
    }                                                                          \
  }()
