// ddl::tensor: a tensor from C++ literals, as torch::tensor: tensor({{1, 2}, {3, 4}}),
// tensor(2.5), tensor({true, false}), tensor(std::vector<float>{...}). The element type
// gives the dtype as LibTorch's does: integers int64, floating values float32 (the default
// dtype), bool bool, uint8_t uint8; options convert to another dtype or device. Nested lists
// must be rectangular and one element type throughout; anything else is a ddl::Error naming
// `tensor`. The list is read into host memory first, so keep it to literal sizes.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/core/tensor_options.h>

namespace ddl {

namespace detail {

// One node of a nested list: a scalar or a list of nodes (LibTorch's TensorDataContainer).
// No default constructor, so that `tensor({})` is the empty list, not a scalar.
class TensorData {
 public:
  enum class Kind { Bool, Byte, Integer, Floating };
  TensorData(bool v) : kind_(Kind::Bool), integer_(v) {}     // NOLINT: implicit, so braced lists work
  TensorData(uint8_t v) : kind_(Kind::Byte), integer_(v) {}  // NOLINT
  template <std::integral I>
  requires(!std::same_as<I, bool> && !std::same_as<I, uint8_t>) TensorData(I v)  // NOLINT
      : kind_(Kind::Integer), integer_(static_cast<int64_t>(v)) {}
  template <std::floating_point F>
  TensorData(F v) : kind_(Kind::Floating), floating_(static_cast<double>(v)) {}            // NOLINT
  TensorData(std::initializer_list<TensorData> list) : is_list_(true), children_(list) {}  // NOLINT
  template <typename T>
  requires(std::is_arithmetic_v<T>) TensorData(const std::vector<T>& values)  // NOLINT
      : is_list_(true), children_(values.begin(), values.end()) {}

  bool is_list() const { return is_list_; }
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  double floating() const { return floating_; }
  const std::vector<TensorData>& children() const { return children_; }

 private:
  bool is_list_ = false;
  Kind kind_ = Kind::Floating;
  int64_t integer_ = 0;
  double floating_ = 0;
  std::vector<TensorData> children_;
};

}  // namespace detail

// A new CPU tensor (or on opts' device) holding the literal; see the header comment.
Tensor tensor(const detail::TensorData& data, TensorOptions opts = {});

}  // namespace ddl
