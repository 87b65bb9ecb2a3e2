// Tensor factories. Every factory takes optional TensorOptions (tensor/core/tensor_options.h:
// dtype, default float32, and device, default cpu); random ones take an explicit Generator.
// requires_grad(true) is refused here: ddl::autograd::zeros & co. (autograd/factory.h) return
// a Variable that requires grad.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ddl/tensor/core/literal.h>
#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/core/tensor_options.h>

namespace ddl {

Tensor empty(const Shape& shape, TensorOptions opts = {});
Tensor zeros(const Shape& shape, TensorOptions opts = {});
Tensor ones(const Shape& shape, TensorOptions opts = {});
Tensor full(const Shape& shape, double value, TensorOptions opts = {});
// Values start, start + step, ... below end (int64 when all arguments are integral and no dtype is given).
Tensor arange(double start, double end, double step = 1.0, TensorOptions opts = {});
Tensor arange(int64_t end, TensorOptions opts = {});  // int64 unless opts name a dtype
// `steps` values from start to end inclusive, evenly spaced (torch.linspace); logspace gives base^each.
Tensor linspace(double start, double end, int64_t steps, TensorOptions opts = {});
Tensor logspace(double start, double end, int64_t steps, double base = 10.0, TensorOptions opts = {});
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, double value);
// The same with options: what they leave unset (dtype, device) is taken from t.
Tensor empty_like(const Tensor& t, TensorOptions opts);
Tensor zeros_like(const Tensor& t, TensorOptions opts);
Tensor ones_like(const Tensor& t, TensorOptions opts);
Tensor full_like(const Tensor& t, double value, TensorOptions opts);
// The n x m identity (m = n when not given), as torch::eye.
Tensor eye(int64_t n, TensorOptions opts = {});
Tensor eye(int64_t n, int64_t m, TensorOptions opts = {});
// A 0-dim tensor holding `value`.
Tensor scalar_tensor(double value, TensorOptions opts = {});

// Copies `values` into a new CPU tensor of `shape` (values.size() must equal its numel).
template <typename T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape);
template <typename T>
Tensor from_vector(const std::vector<T>& values) {
  return from_vector(values, Shape{static_cast<int64_t>(values.size())});
}
// Views memory the caller owns (no copy); `deleter`, if given, runs when the last view dies.
Tensor from_blob(void* data, const Shape& shape, DType dtype, std::function<void(void*)> deleter = {});

// Reads a CPU tensor's elements, in row-major order, converted to T.
template <typename T>
std::vector<T> to_vector(const Tensor& t);

}  // namespace ddl
