// conv2d frontend: validates shapes, dtypes and devices, accepts unbatched
// [C, H, W] input by adding a batch dim of 1, allocates outputs and calls the
// device kernel (tensor/cpu/conv2d.cpp). Kernels see contiguous 4-D tensors.
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/conv.h>
#include <ddl/tensor/ops/reduce.h>
#include <ddl/tensor/ops/spatial_args.h>

namespace ddl {

namespace kernels {
DDL_DEFINE_KERNEL(conv2d_forward_kernel, Conv2dForwardFn);
DDL_DEFINE_KERNEL(conv2d_backward_input_kernel, Conv2dBackwardInputFn);
DDL_DEFINE_KERNEL(conv2d_backward_weight_kernel, Conv2dBackwardWeightFn);
}  // namespace kernels

// Floats on every device; integers on the CPU, where PyTorch computes them too (its CUDA
// convolutions are float only); never bool (PyTorch: "not implemented for 'Bool'").
void detail::check_conv_dtype(const Tensor& t, const char* op) {
  DDL_CHECK(t.dtype() != DType::Bool, op, ": expected a float or integer tensor, got ", describe(t));
  DDL_CHECK(is_floating(t.dtype()) || t.device().is_cpu(), op,
            ": integer convolutions run on the CPU only (as in PyTorch), got ", describe(t));
}

int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

namespace {

using spatial::as_4d;

void check_params(const Conv2dParams& p, const char* op) {
  for (int i = 0; i < 2; ++i) {
    DDL_CHECK(p.stride[i] > 0, op, ": stride must be positive, got [", p.stride[0], ", ", p.stride[1], "]");
    DDL_CHECK(p.dilation[i] > 0, op, ": dilation must be positive, got [", p.dilation[0], ", ", p.dilation[1], "]");
    DDL_CHECK(p.padding[i] >= 0, op, ": padding must be non-negative, got [", p.padding[0], ", ", p.padding[1], "]");
  }
  DDL_CHECK(p.groups > 0, op, ": groups must be positive, got ", p.groups);
}

// Checks x (4-D) against w and returns the output shape [N, K, P, Q].
Shape conv_output_shape(const Shape& xs, const Shape& ws, const Conv2dParams& p, const char* op) {
  DDL_CHECK(ws.size() == 4, op, ": weight must be 4-D [K, C/groups, R, S], got ", ws);
  const int64_t C = xs[1], K = ws[0];
  DDL_CHECK(C % p.groups == 0, op, ": groups=", p.groups, " does not divide the ", C, " input channels of ", xs);
  DDL_CHECK(K % p.groups == 0, op, ": groups=", p.groups, " does not divide the ", K, " output channels of weight ",
            ws);
  DDL_CHECK(ws[1] * p.groups == C, op, ": input ", xs, " has ", C, " channels but weight ", ws, " expects ",
            ws[1] * p.groups, " (groups=", p.groups, ")");
  Shape ys{xs[0], K, 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t padded = xs[2 + i] + 2 * p.padding[i];
    const int64_t eff = p.dilation[i] * (ws[2 + i] - 1) + 1;
    DDL_CHECK(eff <= padded, op, ": kernel ", ws, " (dilated extent ", eff, ") is bigger than the padded input ", xs,
              " (padded extent ", padded, " in dim ", 2 + i, ")");
    ys[2 + i] = conv_out_size(xs[2 + i], ws[2 + i], p.stride[i], p.padding[i], p.dilation[i]);
  }
  return ys;
}

void check_same(const Tensor& a, const Tensor& b, const char* op, const char* an, const char* bn) {
  DDL_CHECK(a.dtype() == b.dtype(), op, ": ", an, " is ", describe(a), " but ", bn, " is ", describe(b),
            " (dtypes must match)");
  DDL_CHECK(a.device() == b.device(), op, ": ", an, " is on ", a.device(), " but ", bn, " is on ", b.device());
}

// Lifts an unbatched [C, H, W] shape to [1, C, H, W]; rejects other ranks.
Shape batched(const Shape& s, const char* op, const char* what) {
  DDL_CHECK(s.size() == 3 || s.size() == 4, op, ": ", what, " must be 4-D [N, C, H, W] or 3-D [C, H, W], got ", s);
  if (s.size() == 4) return s;
  return Shape{1, s[0], s[1], s[2]};
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p) {
  DDL_CHECK(x.defined() && w.defined(), "conv2d: input and weight must be defined");
  check_params(p, "conv2d");
  detail::check_conv_dtype(x, "conv2d");
  check_same(x, w, "conv2d", "input", "weight");
  const Shape xs = batched(x.shape(), "conv2d", "input");
  const Shape ys = conv_output_shape(xs, w.shape(), p, "conv2d");
  if (bias.defined()) {
    check_same(x, bias, "conv2d", "input", "bias");
    DDL_CHECK(bias.dim() == 1 && bias.size(0) == ys[1], "conv2d: bias must be [", ys[1], "] for weight ", w.shape(),
              ", got ", bias.shape());
  }
  Tensor y = empty(ys, TensorOptions(x.dtype(), x.device()));
  if (y.numel() > 0) {
    if (x.numel() == 0 || w.numel() == 0) {
      // Nothing to sum: C/groups*R*S is 0, or every window lies in the padding of an
      // empty image. cuDNN rejects these shapes, so y = 0 + bias here for all devices.
      y.zero_();
      if (bias.defined()) y.add_(bias.reshape({1, ys[1], 1, 1}));
    } else {
      kernels::conv2d_forward_kernel(x.device())(as_4d(x), w.contiguous(),
                                                 bias.defined() ? bias.contiguous() : Tensor(), y, p);
    }
  }
  return x.dim() == 4 ? y : y.squeeze(0);
}

Tensor conv2d_backward_input(const Tensor& grad_y, const Tensor& w, const Shape& x_shape, const Conv2dParams& p) {
  check_params(p, "conv2d_backward_input");
  detail::check_conv_dtype(grad_y, "conv2d_backward_input");
  check_same(grad_y, w, "conv2d_backward_input", "grad_y", "weight");
  const Shape xs = batched(x_shape, "conv2d_backward_input", "input shape");
  const Shape ys = conv_output_shape(xs, w.shape(), p, "conv2d_backward_input");
  DDL_CHECK(batched(grad_y.shape(), "conv2d_backward_input", "grad_y") == ys && grad_y.dim() == x_shape.size(),
            "conv2d_backward_input: grad_y ", grad_y.shape(), " does not match the output ", ys, " of input ", x_shape,
            " and weight ", w.shape());
  Tensor gx = empty(xs, TensorOptions(grad_y.dtype(), grad_y.device()));
  if (gx.numel() > 0) {
    // An empty reduction (no grad_y, or a weight with R*S == 0) gives zeros; see conv2d.
    if (grad_y.numel() == 0 || w.numel() == 0)
      gx.zero_();
    else
      kernels::conv2d_backward_input_kernel(gx.device())(as_4d(grad_y), w.contiguous(), gx, p);
  }
  return x_shape.size() == 4 ? gx : gx.squeeze(0);
}

Tensor conv2d_backward_weight(const Tensor& grad_y, const Tensor& x, const Shape& w_shape, const Conv2dParams& p) {
  check_params(p, "conv2d_backward_weight");
  detail::check_conv_dtype(grad_y, "conv2d_backward_weight");
  check_same(grad_y, x, "conv2d_backward_weight", "grad_y", "input");
  const Shape xs = batched(x.shape(), "conv2d_backward_weight", "input");
  const Shape ys = conv_output_shape(xs, w_shape, p, "conv2d_backward_weight");
  DDL_CHECK(batched(grad_y.shape(), "conv2d_backward_weight", "grad_y") == ys && grad_y.dim() == x.dim(),
            "conv2d_backward_weight: grad_y ", grad_y.shape(), " does not match the output ", ys, " of input ",
            x.shape(), " and weight ", w_shape);
  Tensor gw = empty(w_shape, TensorOptions(grad_y.dtype(), grad_y.device()));
  if (gw.numel() > 0) {
    // An empty reduction (no grad_y, or an empty image seen only through padding) gives zeros.
    if (grad_y.numel() == 0 || x.numel() == 0)
      gw.zero_();
    else
      kernels::conv2d_backward_weight_kernel(gw.device())(as_4d(grad_y), as_4d(x), gw, p);
  }
  return gw;
}

Tensor conv2d_backward_bias(const Tensor& grad_y) {
  DDL_CHECK(grad_y.dim() == 3 || grad_y.dim() == 4, "conv2d_backward_bias: grad_y must be 3-D or 4-D, got ",
            grad_y.shape());
  return grad_y.dim() == 4 ? sum(grad_y, {0, 2, 3}) : sum(grad_y, {1, 2});
}

}  // namespace ddl
