// Adaptive pooling frontends: shape checks, unbatched [C, H, W] input via a
// batch dim of 1, output allocation and kernel dispatch.
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/adaptive_pool.h>
#include <ddl/tensor/ops/spatial_args.h>

namespace ddl {

namespace kernels {
DDL_DEFINE_KERNEL(adaptive_avg_pool2d_forward_kernel, AdaptiveAvgPool2dForwardFn);
DDL_DEFINE_KERNEL(adaptive_avg_pool2d_backward_kernel, AdaptiveAvgPool2dBackwardFn);
DDL_DEFINE_KERNEL(adaptive_max_pool2d_forward_kernel, AdaptiveMaxPool2dForwardFn);
}  // namespace kernels

namespace {

using spatial::as_4d;
using spatial::check_float;
using spatial::like_input;
using spatial::widens;

Shape batched(const Shape& s, const char* op) {
  DDL_CHECK(s.size() == 3 || s.size() == 4, op, ": input must be 4-D [N, C, H, W] or 3-D [C, H, W], got ", s);
  DDL_CHECK(s[s.size() - 1] > 0 && s[s.size() - 2] > 0, op, ": input ", s, " has an empty spatial dim");
  return s.size() == 4 ? s : Shape{1, s[0], s[1], s[2]};
}

Shape output_shape(const Shape& x_shape, std::array<int64_t, 2> out, const char* op) {
  // A zero output size gives an empty output, as PyTorch 1.13's forward (its backward refuses one).
  DDL_CHECK(out[0] >= 0 && out[1] >= 0, op, ": output_size must be non-negative, got [", out[0], ", ", out[1], "]");
  const Shape xs = batched(x_shape, op);
  return Shape{xs[0], xs[1], out[0], out[1]};
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> output_size) {
  if (widens(x)) return adaptive_avg_pool2d(x.to(DType::Float32), output_size).to(x.dtype());
  check_float(x, "adaptive_avg_pool2d");
  const Shape ys = output_shape(x.shape(), output_size, "adaptive_avg_pool2d");
  Tensor y = empty(ys, TensorOptions(x.dtype(), x.device()));
  if (y.numel() > 0) kernels::adaptive_avg_pool2d_forward_kernel(x.device())(as_4d(x), y);
  return like_input(y, x.dim());
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape) {
  if (widens(grad_y)) return adaptive_avg_pool2d_backward(grad_y.to(DType::Float32), x_shape).to(grad_y.dtype());
  check_float(grad_y, "adaptive_avg_pool2d_backward");
  const Shape xs = batched(x_shape, "adaptive_avg_pool2d_backward");
  DDL_CHECK(grad_y.dim() == static_cast<int64_t>(x_shape.size()), "adaptive_avg_pool2d_backward: grad_y ",
            grad_y.shape(), " and input ", x_shape, " must both be 4-D or 3-D");
  const Tensor gy = as_4d(grad_y);
  DDL_CHECK(gy.size(0) == xs[0] && gy.size(1) == xs[1], "adaptive_avg_pool2d_backward: grad_y ", grad_y.shape(),
            " does not match input ", x_shape);
  // A zero output size averages no window: every input's gradient is 0 (PyTorch 1.13's backward raises).
  if (gy.numel() == 0) return like_input(zeros(xs, TensorOptions(grad_y.dtype(), grad_y.device())), x_shape.size());
  Tensor gx = empty(xs, TensorOptions(grad_y.dtype(), grad_y.device()));
  if (gx.numel() > 0) kernels::adaptive_avg_pool2d_backward_kernel(gx.device())(gy, gx);
  return like_input(gx, x_shape.size());
}

std::pair<Tensor, Tensor> adaptive_max_pool2d(const Tensor& x, std::array<int64_t, 2> output_size, const char* op) {
  if (widens(x)) {  // the maxima are exact
    auto [y, idx] = adaptive_max_pool2d(x.to(DType::Float32), output_size, op);
    return {y.to(x.dtype()), idx};
  }
  check_float(x, op);
  const Shape ys = output_shape(x.shape(), output_size, op);
  Tensor y = empty(ys, TensorOptions(x.dtype(), x.device()));
  Tensor idx = empty(ys, TensorOptions(DType::Int64, x.device()));
  if (y.numel() > 0) kernels::adaptive_max_pool2d_forward_kernel(x.device())(as_4d(x), y, idx);
  return {like_input(y, x.dim()), like_input(idx, x.dim())};
}

}  // namespace ddl
