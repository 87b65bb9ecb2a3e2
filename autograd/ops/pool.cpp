// Pooling forward and backward side by side. Max pooling (fixed or adaptive
// windows) saves the argmax indices (not the input) and routes each gradient
// to its maximum; average pooling spreads it evenly over the window.
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/pool.h>

namespace ddl {

Variable max_pool2d(const Variable& x, const Pool2dParams& p) {
  auto [y, idx] = max_pool2d_with_indices(x.data(), p, "max_pool2d");
  const Shape xs = x.shape();
  return autograd::make_result(
      std::move(y), "MaxPool2dBackward", {&x},
      // With p, CUDA skips its deterministic sort when windows cannot share an input.
      [idx = idx, xs, p](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        return {needs[0] ? max_pool2d_backward(g, idx, xs, p) : Tensor()};
      },
      autograd::max_pool2d_double_backward(idx, xs));  // double_backward.cpp
}

Variable avg_pool2d(const Variable& x, const Pool2dParams& p) {
  const Shape xs = x.shape();
  return autograd::make_result(
      avg_pool2d(x.data(), p), "AvgPool2dBackward", {&x},
      [xs, p](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        return {needs[0] ? avg_pool2d_backward(g, xs, p) : Tensor()};
      },
      autograd::avg_pool2d_double_backward(xs, p));  // double_backward.cpp
}

namespace {
Pool2dParams square(int64_t kernel, int64_t stride) {
  Pool2dParams p;
  p.kernel = {kernel, kernel};
  p.stride = {stride > 0 ? stride : kernel, stride > 0 ? stride : kernel};
  return p;
}
}  // namespace

namespace {
// Errors name `op`, the function the user called.
std::pair<Variable, Tensor> adaptive_max_pool(const Variable& x, std::array<int64_t, 2> output_size, const char* op) {
  auto [y, idx] = adaptive_max_pool2d(x.data(), output_size, op);
  const Shape xs = x.shape();
  Variable out = autograd::make_result(
      std::move(y), "AdaptiveMaxPool2dBackward", {&x},
      [idx = idx, xs](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        return {needs[0] ? max_pool2d_backward(g, idx, xs) : Tensor()};
      },
      autograd::max_pool2d_double_backward(idx, xs));  // double_backward.cpp
  return {out, idx};
}
}  // namespace

std::pair<Variable, Tensor> adaptive_max_pool2d_with_indices(const Variable& x, std::array<int64_t, 2> output_size) {
  return adaptive_max_pool(x, output_size, "adaptive_max_pool2d_with_indices");
}

Variable adaptive_max_pool2d(const Variable& x, std::array<int64_t, 2> output_size) {
  return adaptive_max_pool(x, output_size, "adaptive_max_pool2d").first;
}

Variable adaptive_avg_pool2d(const Variable& x, std::array<int64_t, 2> output_size) {
  const Shape xs = x.shape();
  return autograd::make_result(
      adaptive_avg_pool2d(x.data(), output_size), "AdaptiveAvgPool2dBackward", {&x},
      [xs](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        return {needs[0] ? adaptive_avg_pool2d_backward(g, xs) : Tensor()};
      },
      autograd::adaptive_avg_pool2d_double_backward(xs));  // double_backward.cpp
}

Variable max_pool2d(const Variable& x, int64_t kernel, int64_t stride) { return max_pool2d(x, square(kernel, stride)); }
Variable avg_pool2d(const Variable& x, int64_t kernel, int64_t stride) { return avg_pool2d(x, square(kernel, stride)); }

}  // namespace ddl
