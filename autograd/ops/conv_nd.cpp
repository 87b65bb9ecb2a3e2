// conv3d and the transposed convolutions of 1 and 3 dims, built from conv2d and
// conv_transpose2d so that forward, gradients and double backward come from
// those ops' autograd. See Note [Depth as batch].
#include <string>
#include <vector>

#include <ddl/autograd/autocast.h>
#include <ddl/autograd/ops/conv.h>
#include <ddl/autograd/ops/conv_nd.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/conv.h>
#include <ddl/tensor/ops/conv_transpose.h>

namespace ddl {

// Note [Depth as batch]
// A 3-D convolution is a sum over the kernel's depth index i of 2-D convolutions:
// y[:, :, o] = sum_i conv2d(x[:, :, o * s + i * d], w[:, :, i]) over the zero-padded input. The
// depth positions o * s + i * d for all o form one strided slice, which is folded into the batch
// ([N, C, Do, H, W] -> [N * Do, C, H, W]), so the whole sum is kd conv2d calls. The transposed
// form is the same after the input is zero-stuffed along depth (stride - 1 zeros between slices):
// y[:, :, o] = sum_i conv_transpose2d(x_stuffed[:, :, o + pad - i * d], w[:, :, i]).

namespace {

std::string join3(const ExpandingArray<3>& a) { return a.tuple_repr(); }

// Checks shared by the convolutions over n spatial dims, as PyTorch's; cin_dim is the weight dim
// that holds the input channels per group (1 for a convolution, 0 for a transposed one).
void check_conv(const Variable& x, const Variable& w, const Variable& bias, int64_t n, bool transposed,
                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                const std::vector<int64_t>& dilation, int64_t groups, const char* op) {
  DDL_CHECK(x.defined() && w.defined(), op, ": input and weight must be defined");
  DDL_CHECK(x.dim() == n + 1 || x.dim() == n + 2, op, ": expected a ", n + 1, "-D (unbatched) or ", n + 2,
            "-D (batched) input, got ", x.shape());
  DDL_CHECK(w.dim() == n + 2, op, ": weight must be ", n + 2, "-D, got ", w.shape());
  DDL_CHECK(x.dtype() == w.dtype() && (!bias.defined() || bias.dtype() == x.dtype()), op,
            ": input, weight and bias must have one dtype, got ", dtype_name(x.dtype()), ", ", dtype_name(w.dtype()),
            bias.defined() ? std::string(", ") + dtype_name(bias.dtype()) : std::string());
  for (int64_t i = 0; i < n; ++i) {
    DDL_CHECK(stride[i] > 0 && dilation[i] > 0, op, ": stride and dilation must be positive");
    DDL_CHECK(padding[i] >= 0, op, ": padding must be non-negative");
  }
  DDL_CHECK(groups > 0, op, ": groups must be positive, got ", groups);
  const int64_t c = x.size(x.dim() - n - 1);
  const int64_t out_channels = transposed ? w.size(1) * groups : w.size(0);
  if (transposed) {
    DDL_CHECK(w.size(0) == c, op, ": weight ", w.shape(), " expects input ", x.shape(), " to have ", w.size(0),
              " channels, got ", c);
    DDL_CHECK(c % groups == 0, op, ": groups=", groups, " must divide the input channels ", c);
  } else {
    DDL_CHECK(w.size(0) % groups == 0, op, ": groups=", groups, " must divide the weight's dim 0, got weight ",
              w.shape());
    DDL_CHECK(w.size(1) * groups == c, op, ": weight ", w.shape(), " with groups=", groups, " expects input ",
              x.shape(), " to have ", w.size(1) * groups, " channels, got ", c);
  }
  if (bias.defined())
    DDL_CHECK(bias.dim() == 1 && bias.size(0) == out_channels, op, ": bias must be [", out_channels, "], got ",
              bias.shape());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in = x.size(x.dim() - n + i), k = w.size(2 + i);
    if (!transposed)
      DDL_CHECK(in + 2 * padding[i] >= dilation[i] * (k - 1) + 1, op, ": kernel ", w.shape(),
                " (dilated) is larger than the padded input ", x.shape(), " with padding ", padding[i]);
  }
}

}  // namespace

Variable conv3d(const Variable& x, const Variable& w, const Variable& bias, ExpandingArray<3> stride,
                ExpandingArray<3> padding, ExpandingArray<3> dilation, int64_t groups) {
  if (autocast::needs_low(x) || autocast::needs_low(w) || autocast::needs_low(bias))  // See Note [Autocast]
    return conv3d(autocast::to_low(x), autocast::to_low(w), autocast::to_low(bias), stride, padding, dilation, groups);
  const auto s = stride.value(), p = padding.value(), d = dilation.value();
  check_conv(x, w, bias, 3, false, {s[0], s[1], s[2]}, {p[0], p[1], p[2]}, {d[0], d[1], d[2]}, groups, "conv3d");
  const Variable xb = x.dim() == 5 ? x : x.unsqueeze(0);
  const int64_t n = xb.size(0), c = xb.size(1), h = xb.size(3), wd = xb.size(4), k = w.size(0), kd = w.size(2);
  const int64_t od = conv_out_size(xb.size(2), kd, s[0], p[0], d[0]);
  const Variable xp = p[0] > 0 ? pad(xb, {0, 0, 0, 0, p[0], p[0]}) : xb;
  Conv2dParams p2;
  p2.stride = {s[1], s[2]}, p2.padding = {p[1], p[2]}, p2.dilation = {d[1], d[2]}, p2.groups = groups;
  Variable acc;
  for (int64_t i = 0; i < kd; ++i) {  // See Note [Depth as batch]
    const Variable xs = xp.slice(2, i * d[0], i * d[0] + (od - 1) * s[0] + 1, s[0])
                            .permute({0, 2, 1, 3, 4})
                            .reshape({n * od, c, h, wd});
    const Variable yi = conv2d(xs, w.select(2, i), Variable(), p2);
    acc = i == 0 ? yi : acc + yi;
  }
  Variable y = acc.reshape({n, od, k, acc.size(2), acc.size(3)}).permute({0, 2, 1, 3, 4});
  if (bias.defined()) y = y + bias.reshape({1, k, 1, 1, 1});
  return x.dim() == 5 ? y : y.squeeze(0);
}

Variable conv_transpose1d(const Variable& x, const Variable& w, const Variable& bias, int64_t stride, int64_t padding,
                          int64_t output_padding, int64_t groups, int64_t dilation) {
  check_conv(x, w, bias, 1, true, {stride}, {padding}, {dilation}, groups, "conv_transpose1d");
  DDL_CHECK(output_padding >= 0 && (output_padding < stride || output_padding < dilation),
            "conv_transpose1d: output_padding ", output_padding, " must be smaller than the stride ", stride,
            " or the dilation ", dilation);
  const int64_t out = conv_transpose_out_size(x.size(-1), w.size(2), stride, padding, dilation, output_padding);
  DDL_CHECK(out > 0, "conv_transpose1d: input ", x.shape(), " gives an output of length ", out);
  Conv2dParams p;
  p.stride = {1, stride}, p.padding = {0, padding}, p.dilation = {1, dilation}, p.groups = groups;
  // A length-L sequence is a 1 x L image, as in conv1d.
  const int64_t h_dim = x.dim() - 1;
  return conv_transpose2d(x.unsqueeze(h_dim), w.unsqueeze(2), bias, p, {0, output_padding}).squeeze(h_dim);
}

Variable conv_transpose3d(const Variable& x, const Variable& w, const Variable& bias, ExpandingArray<3> stride,
                          ExpandingArray<3> padding, ExpandingArray<3> output_padding, int64_t groups,
                          ExpandingArray<3> dilation) {
  if (autocast::needs_low(x) || autocast::needs_low(w) || autocast::needs_low(bias))  // See Note [Autocast]
    return conv_transpose3d(autocast::to_low(x), autocast::to_low(w), autocast::to_low(bias), stride, padding,
                            output_padding, groups, dilation);
  const auto s = stride.value(), p = padding.value(), op = output_padding.value(), d = dilation.value();
  check_conv(x, w, bias, 3, true, {s[0], s[1], s[2]}, {p[0], p[1], p[2]}, {d[0], d[1], d[2]}, groups,
             "conv_transpose3d");
  const Variable xb = x.dim() == 5 ? x : x.unsqueeze(0);
  std::vector<int64_t> out(3);
  for (int i = 0; i < 3; ++i) {
    DDL_CHECK(op[i] >= 0 && (op[i] < s[i] || op[i] < d[i]), "conv_transpose3d: output_padding ", join3(output_padding),
              " must be smaller than the stride ", join3(stride), " or the dilation ", join3(dilation));
    out[i] = conv_transpose_out_size(xb.size(2 + i), w.size(2 + i), s[i], p[i], d[i], op[i]);
  }
  DDL_CHECK(out[0] > 0 && out[1] > 0 && out[2] > 0, "conv_transpose3d: input ", x.shape(), " and weight ", w.shape(),
            " give an output of size ", Shape(out));
  const int64_t n = xb.size(0), c = xb.size(1), dd = xb.size(2), h = xb.size(3), wd = xb.size(4), kd = w.size(2);
  Variable xs = xb;
  if (s[0] > 1) {  // zero-stuffed along depth: See Note [Depth as batch]
    const Variable z(zeros({n, c, dd, s[0] - 1, h, wd}, TensorOptions(x.dtype(), x.device())));
    xs = cat({xb.unsqueeze(3), z}, 3).reshape({n, c, dd * s[0], h, wd}).narrow(2, 0, (dd - 1) * s[0] + 1);
  }
  const int64_t front = d[0] * (kd - 1);
  const Variable xp = pad(xs, {0, 0, 0, 0, front, front + op[0]});
  Conv2dParams p2;
  p2.stride = {s[1], s[2]}, p2.padding = {p[1], p[2]}, p2.dilation = {d[1], d[2]}, p2.groups = groups;
  Variable acc;
  for (int64_t i = 0; i < kd; ++i) {
    const Variable xi =
        xp.narrow(2, p[0] + d[0] * (kd - 1 - i), out[0]).permute({0, 2, 1, 3, 4}).reshape({n * out[0], c, h, wd});
    const Variable yi = conv_transpose2d(xi, w.select(2, i), Variable(), p2, {op[1], op[2]});
    acc = i == 0 ? yi : acc + yi;
  }
  const int64_t k = acc.size(1);
  Variable y = acc.reshape({n, out[0], k, out[1], out[2]}).permute({0, 2, 1, 3, 4});
  if (bias.defined()) y = y + bias.reshape({1, k, 1, 1, 1});
  return x.dim() == 5 ? y : y.squeeze(0);
}

}  // namespace ddl
