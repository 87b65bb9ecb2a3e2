// The factories as LibTorch's torch:: ones (as opposed to ATen's at:: ones): the tensor
// factories' results as leaf Variables, requiring grad when the options say so:
//   Variable w = autograd::randn({3, 4}, requires_grad());   // torch::randn({3, 4}, torch::requires_grad())
// The tensor factories (tensor/core/factory.h) refuse requires_grad(true): ddl::Tensor has no
// autograd state. A leaf that requires grad must be floating (the error names the factory).
#pragma once

#include <cstdint>

#include <ddl/autograd/variable.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/random.h>

namespace ddl::autograd {

Variable empty(const Shape& shape, TensorOptions opts = {});
Variable zeros(const Shape& shape, TensorOptions opts = {});
Variable ones(const Shape& shape, TensorOptions opts = {});
Variable full(const Shape& shape, double value, TensorOptions opts = {});
Variable eye(int64_t n, TensorOptions opts = {});
Variable eye(int64_t n, int64_t m, TensorOptions opts = {});
Variable arange(double start, double end, double step = 1.0, TensorOptions opts = {});
Variable arange(int64_t end, TensorOptions opts = {});
Variable linspace(double start, double end, int64_t steps, TensorOptions opts = {});
Variable scalar_tensor(double value, TensorOptions opts = {});
Variable tensor(const ::ddl::detail::TensorData& data, TensorOptions opts = {});
Variable rand(const Shape& shape, TensorOptions opts = {});
Variable randn(const Shape& shape, TensorOptions opts = {});
// Shaped, typed and placed like v unless opts say otherwise; requires grad only when opts say so.
Variable empty_like(const Variable& v, TensorOptions opts = {});
Variable zeros_like(const Variable& v, TensorOptions opts = {});
Variable ones_like(const Variable& v, TensorOptions opts = {});
Variable full_like(const Variable& v, double value, TensorOptions opts = {});
Variable rand_like(const Variable& v, TensorOptions opts = {});
Variable randn_like(const Variable& v, TensorOptions opts = {});

}  // namespace ddl::autograd
