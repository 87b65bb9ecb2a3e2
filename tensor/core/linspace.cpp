// linspace and logspace (declared in factory.h): computed on the host in float64 and rounded
// once to the dtype. As PyTorch's kernels (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp), the
// first half counts up from start and the second half down from end, so both ends are exact.
#include <cmath>
#include <vector>

#include <ddl/base/error.h>
#include <ddl/tensor/core/factory.h>

namespace ddl {

namespace {

std::vector<double> spaced(double start, double end, int64_t steps, const char* op) {
  DDL_CHECK(steps >= 0, op, ": number of steps must be non-negative, got ", steps);
  std::vector<double> v(static_cast<size_t>(steps));
  if (steps == 0) return v;
  v[0] = start;
  if (steps == 1) return v;
  const double step = (end - start) / static_cast<double>(steps - 1);
  const int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i)
    v[i] = i < half ? start + step * static_cast<double>(i) : end - step * static_cast<double>(steps - i - 1);
  return v;
}

Tensor finish(std::vector<double> v, TensorOptions opts) {
  const int64_t n = static_cast<int64_t>(v.size());
  // integer dtypes truncate toward zero, as a C++ cast
  if (!is_floating(opts.dtype()))
    for (double& x : v) x = std::trunc(x);
  return from_vector(v, Shape{n}).to(opts.dtype()).to(opts.device());
}

}  // namespace

Tensor linspace(double start, double end, int64_t steps, TensorOptions opts) {
  detail::refuse_requires_grad(opts, "linspace");
  return finish(spaced(start, end, steps, "linspace"), opts);
}

Tensor logspace(double start, double end, int64_t steps, double base, TensorOptions opts) {
  detail::refuse_requires_grad(opts, "logspace");
  std::vector<double> v = spaced(start, end, steps, "logspace");
  for (double& x : v) x = std::pow(base, x);
  return finish(std::move(v), opts);
}

}  // namespace ddl
