// DDL_ARG: one fluent option field, in the form of LibTorch's TORCH_ARG
// (torch/csrc/api/include/torch/arg.h), so option builders chain in any order:
//   Conv2dOptions(3, 64, 3).stride(2).padding(1)
// opts.name(v) sets the field and returns the options; opts.name() reads it.
// A default follows the macro: `DDL_ARG(int64_t, groups) = 1;`.
#pragma once

#include <utility>

#define DDL_ARG(T, name)                                   \
 public:                                                   \
  auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  auto name(T&& new_##name)->decltype(*this) {             \
    this->name##_ = std::move(new_##name);                 \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
  T& name() noexcept { return this->name##_; }             \
                                                           \
 private:                                                  \
  T name##_
