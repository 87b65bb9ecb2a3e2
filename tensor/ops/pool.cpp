// Pooling frontends: parameter and shape checks (PyTorch's rules), unbatched
// [C, H, W] input via a batch dim of 1, output allocation, kernel dispatch
// (tensor/cpu/pool.cpp).
#include <numeric>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/pool.h>
#include <ddl/tensor/ops/spatial_args.h>

namespace ddl {

namespace kernels {
DDL_DEFINE_KERNEL(max_pool2d_forward_kernel, MaxPool2dForwardFn);
DDL_DEFINE_KERNEL(max_pool2d_backward_kernel, MaxPool2dBackwardFn);
DDL_DEFINE_KERNEL(avg_pool2d_forward_kernel, AvgPool2dForwardFn);
DDL_DEFINE_KERNEL(avg_pool2d_backward_kernel, AvgPool2dBackwardFn);
}  // namespace kernels

int64_t pool_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // Floor division (num may be negative for a too-small input).
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

namespace {

using spatial::as_4d;
using spatial::check_float;
using spatial::like_input;

std::string as_pair(const std::array<int64_t, 2>& a) { return detail::str_cat('[', a[0], ", ", a[1], ']'); }

// Validates x's shape and p; returns the 4-D output shape [N, C, P, Q].
Shape pool_output_shape(const Shape& x_shape, const Pool2dParams& p, const char* op) {
  DDL_CHECK(x_shape.size() == 3 || x_shape.size() == 4, op, ": input must be 4-D [N, C, H, W] or 3-D [C, H, W], got ",
            x_shape);
  const Shape xs = x_shape.size() == 4 ? x_shape : Shape{1, x_shape[0], x_shape[1], x_shape[2]};
  for (int i = 0; i < 2; ++i) {
    DDL_CHECK(p.kernel[i] > 0 && p.stride[i] > 0 && p.dilation[i] > 0, op,
              ": kernel, stride and dilation must be positive, got kernel ", as_pair(p.kernel), ", stride ",
              as_pair(p.stride), ", dilation ", as_pair(p.dilation));
    DDL_CHECK(p.padding[i] >= 0 && 2 * p.padding[i] <= p.kernel[i], op, ": padding ", as_pair(p.padding),
              " must be non-negative and at most half the kernel ", as_pair(p.kernel));
  }
  Shape ys{xs[0], xs[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    ys[2 + i] = pool_out_size(xs[2 + i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i], p.ceil_mode);
    DDL_CHECK(ys[2 + i] >= 1, op, ": input ", x_shape, " is too small for kernel ", as_pair(p.kernel), " with padding ",
              as_pair(p.padding), " and dilation ", as_pair(p.dilation), " (output would be ", ys, ")");
  }
  return ys;
}

// grad_y must have the output shape of x_shape under p (both batched or both not).
void check_grad_y(const Tensor& gy, const Shape& x_shape, const Shape& ys, const char* op) {
  const Shape expect = x_shape.size() == 4 ? ys : Shape{ys[1], ys[2], ys[3]};
  DDL_CHECK(gy.shape() == expect, op, ": grad_y ", gy.shape(), " does not match the output ", expect, " of input ",
            x_shape);
}

// 16-bit max pooling goes through float32 copies on the CPU, whose kernels have no
// 16-bit cases. The CUDA kernels load 16 bits, compare or add in float and round
// once: the same bits (See Note [Half compute]).
bool max_pool_is_16bit(const Tensor& t) { return t.defined() && is_reduced_float(t.dtype()); }
bool max_pool_widens(const Tensor& t) { return max_pool_is_16bit(t) && !t.device().is_cuda(); }

Tensor max_pool_backward(const Tensor& grad_y, const Tensor& indices, const Shape& x_shape, bool disjoint) {
  if (max_pool_widens(grad_y))
    return max_pool_backward(grad_y.to(DType::Float32), indices, x_shape, disjoint).to(grad_y.dtype());
  if (!max_pool_is_16bit(grad_y)) check_float(grad_y, "max_pool2d_backward");
  DDL_CHECK(indices.dtype() == DType::Int64, "max_pool2d_backward: indices must be int64, got ", describe(indices));
  DDL_CHECK(indices.shape() == grad_y.shape(), "max_pool2d_backward: indices ", indices.shape(), " and grad_y ",
            grad_y.shape(), " must have the same shape");
  DDL_CHECK(indices.device() == grad_y.device(), "max_pool2d_backward: indices on ", indices.device(),
            " but grad_y on ", grad_y.device());
  DDL_CHECK((x_shape.size() == 4 && grad_y.dim() == 4) || (x_shape.size() == 3 && grad_y.dim() == 3),
            "max_pool2d_backward: input shape ", x_shape, " and grad_y ", grad_y.shape(), " must both be 4-D or 3-D");
  const Tensor gy = as_4d(grad_y);
  const Shape xs = x_shape.size() == 4 ? x_shape : Shape{1, x_shape[0], x_shape[1], x_shape[2]};
  DDL_CHECK(gy.size(0) == xs[0] && gy.size(1) == xs[1], "max_pool2d_backward: grad_y ", grad_y.shape(),
            " does not match input ", x_shape, " in batch or channels");
  Tensor gx = empty(xs, TensorOptions(grad_y.dtype(), grad_y.device()));
  if (gx.numel() > 0) kernels::max_pool2d_backward_kernel(gx.device())(gy, as_4d(indices), gx, disjoint);
  return like_input(gx, x_shape.size());
}

}  // namespace

// Note [Disjoint pooling windows]
// Along one dim, window p reads positions p*s - pad + d*j, j in [0, k). Windows p and
// p + m share one iff d*(j - j') = m*s with |j - j'| <= k - 1; the least multiple of s
// that d divides is lcm(s, d), so they never do iff lcm(s, d) / d = s / gcd(s, d) >= k
// (s >= k without dilation; k 2, d 3, s 2 interleaves yet never meets). Two outputs
// differ in p or in q, so 2-D windows are disjoint iff both dims are. An argmax is
// always a position of its own window, except for a window with no position inside
// the input, which padding with dilation > 1 can make: its index is a stray position
// (PyTorch's too), which may be another window's, so padding needs dilation 1 here.
bool max_pool2d_windows_disjoint(const Pool2dParams& p) {
  for (int i = 0; i < 2; ++i) {
    const int64_t s = p.stride[i], d = p.dilation[i];
    if (s <= 0 || d <= 0 || p.kernel[i] <= 0) return false;  // invalid params (refused elsewhere)
    if (s / std::gcd(s, d) < p.kernel[i] || (p.padding[i] > 0 && d > 1)) return false;
  }
  return true;
}

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const Pool2dParams& p, const char* op) {
  if (max_pool_widens(x)) {  // the maxima are exact
    auto [y, idx] = max_pool2d_with_indices(x.to(DType::Float32), p, op);
    return {y.to(x.dtype()), idx};
  }
  if (!max_pool_is_16bit(x)) check_float(x, op);
  const Shape ys = pool_output_shape(x.shape(), p, op);
  Tensor y = empty(ys, TensorOptions(x.dtype(), x.device()));
  Tensor idx = empty(ys, TensorOptions(DType::Int64, x.device()));
  if (y.numel() > 0) kernels::max_pool2d_forward_kernel(x.device())(as_4d(x), y, idx, p);
  return {like_input(y, x.dim()), like_input(idx, x.dim())};
}

Tensor max_pool2d(const Tensor& x, const Pool2dParams& p) { return max_pool2d_with_indices(x, p, "max_pool2d").first; }

Tensor max_pool2d_backward(const Tensor& grad_y, const Tensor& indices, const Shape& x_shape) {
  return max_pool_backward(grad_y, indices, x_shape, false);
}

Tensor max_pool2d_backward(const Tensor& grad_y, const Tensor& indices, const Shape& x_shape, const Pool2dParams& p) {
  if (grad_y.defined())
    check_grad_y(grad_y, x_shape, pool_output_shape(x_shape, p, "max_pool2d_backward"), "max_pool2d_backward");
  return max_pool_backward(grad_y, indices, x_shape, max_pool2d_windows_disjoint(p));
}

Tensor avg_pool2d(const Tensor& x, const Pool2dParams& p) {
  if (x.defined() && is_reduced_float(x.dtype())) return avg_pool2d(x.to(DType::Float32), p).to(x.dtype());
  // int64 averages (sums divided with truncation) on the CPU, as PyTorch's CPU kernel.
  if (!(x.defined() && x.dtype() == DType::Int64 && x.device().is_cpu())) check_float(x, "avg_pool2d");
  DDL_CHECK(p.dilation[0] == 1 && p.dilation[1] == 1, "avg_pool2d: dilation must be [1, 1], got ", as_pair(p.dilation));
  const Shape ys = pool_output_shape(x.shape(), p, "avg_pool2d");
  Tensor y = empty(ys, TensorOptions(x.dtype(), x.device()));
  if (y.numel() > 0) kernels::avg_pool2d_forward_kernel(x.device())(as_4d(x), y, p);
  return like_input(y, x.dim());
}

Tensor avg_pool2d_backward(const Tensor& grad_y, const Shape& x_shape, const Pool2dParams& p) {
  if (grad_y.defined() && is_reduced_float(grad_y.dtype()))  // See Note [Half compute]
    return avg_pool2d_backward(grad_y.to(DType::Float32), x_shape, p).to(grad_y.dtype());
  check_float(grad_y, "avg_pool2d_backward");
  DDL_CHECK(p.dilation[0] == 1 && p.dilation[1] == 1, "avg_pool2d_backward: dilation must be [1, 1], got ",
            as_pair(p.dilation));
  const Shape ys = pool_output_shape(x_shape, p, "avg_pool2d_backward");
  check_grad_y(grad_y, x_shape, ys, "avg_pool2d_backward");
  const Shape xs = x_shape.size() == 4 ? x_shape : Shape{1, x_shape[0], x_shape[1], x_shape[2]};
  Tensor gx = empty(xs, TensorOptions(grad_y.dtype(), grad_y.device()));
  if (gx.numel() > 0) kernels::avg_pool2d_backward_kernel(gx.device())(as_4d(grad_y), gx, p);
  return like_input(gx, x_shape.size());
}

}  // namespace ddl
