// DType names, sizes and promotion.
#include <ddl/tensor/core/dtype.h>

namespace ddl {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
    case DType::Int64:
      return 8;
    case DType::Int32:
      return 4;
    case DType::Int16:
      return 2;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:
      return 1;
    case DType::Float16:
      return 2;
    case DType::BFloat16:
      return 2;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Int64:
      return "int64";
    case DType::Int32:
      return "int32";
    case DType::Int16:
      return "int16";
    case DType::Int8:
      return "int8";
    case DType::UInt8:
      return "uint8";
    case DType::Bool:
      return "bool";
    case DType::Float16:
      return "float16";
    case DType::BFloat16:
      return "bfloat16";
  }
  return "?";
}

bool is_floating(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

bool is_integral(DType t) {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

std::pair<double, double> integral_range(DType t) {
  switch (t) {
    case DType::UInt8:
      return {0.0, 255.0};
    case DType::Int8:
      return {-128.0, 127.0};
    case DType::Int16:
      return {-32768.0, 32767.0};
    case DType::Int32:
      return {-2147483648.0, 2147483647.0};
    default:
      return {-0x1p63, 0x1p63};
  }
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

namespace {
int rank_of(DType t) {
  switch (t) {
    case DType::Bool:
      return 0;
    case DType::UInt8:
    case DType::Int8:
      return 1;
    case DType::Int16:
      return 2;
    case DType::Int32:
      return 3;
    case DType::Int64:
      return 4;
    case DType::Float16:
    case DType::BFloat16:
      return 5;
    case DType::Float32:
      return 6;
    case DType::Float64:
      return 7;
  }
  return 0;
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // float16 with bfloat16: neither holds the other, so float32 (as torch.promote_types).
  if (is_reduced_float(a) && is_reduced_float(b)) return DType::Float32;
  // uint8 with int8: neither holds the other, so int16 (as torch.promote_types).
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) return DType::Int16;
  return rank_of(a) >= rank_of(b) ? a : b;
}

}  // namespace ddl
