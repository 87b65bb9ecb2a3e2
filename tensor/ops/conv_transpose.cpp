// conv_transpose2d frontend: computes the output shape and runs conv2d's
// input-gradient kernel (any device that has one), then adds the bias; and its
// two gradients through conv2d's forward and weight-gradient kernels.
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/conv_transpose.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl {

namespace {

// Note [Large output_padding]
// conv2d's geometry over an output of extent (H - 1) s - 2 p + d (k - 1) + op + 1
// has H + floor(op / s) positions, so with op >= s (PyTorch allows it while
// op < dilation) conv2d's kernels expect floor(op / s) more input rows than x has.
// The rows they would read lie past every tap that reaches the output, so x is
// extended with zeros there: the sums gain only zero terms.
std::array<int64_t, 2> extra_rows(const Conv2dParams& p, std::array<int64_t, 2> output_padding) {
  return {output_padding[0] / p.stride[0], output_padding[1] / p.stride[1]};
}

Tensor zero_extended(const Tensor& x, std::array<int64_t, 2> extra) {
  if (extra[0] == 0 && extra[1] == 0) return x;
  Shape s = x.shape();
  const int64_t h = x.dim() - 2;
  s[h] += extra[0], s[h + 1] += extra[1];
  Tensor out = zeros(s, TensorOptions(x.dtype(), x.device()));
  out.narrow(h, 0, x.size(h)).narrow(h + 1, 0, x.size(h + 1)).copy_(x);
  return out;
}

}  // namespace

int64_t conv_transpose_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                                int64_t output_padding) {
  return (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1;
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p,
                        std::array<int64_t, 2> output_padding) {
  DDL_CHECK(x.defined() && w.defined(), "conv_transpose2d: input and weight must be defined");
  DDL_CHECK(x.dim() == 3 || x.dim() == 4, "conv_transpose2d: input must be 4-D [N, C, H, W] or 3-D [C, H, W], got ",
            x.shape());
  DDL_CHECK(w.dim() == 4, "conv_transpose2d: weight must be 4-D [Cin, Cout/groups, R, S], got ", w.shape());
  DDL_CHECK(p.groups > 0, "conv_transpose2d: groups must be positive, got ", p.groups);
  detail::check_conv_dtype(x, "conv_transpose2d");
  DDL_CHECK(x.dtype() == w.dtype() && x.device() == w.device(), "conv_transpose2d: input is ", describe(x),
            " but weight is ", describe(w), " (dtypes must match, devices too)");
  const int64_t cin = x.size(x.dim() - 3);
  DDL_CHECK(w.size(0) == cin, "conv_transpose2d: input ", x.shape(), " has ", cin, " channels but weight ", w.shape(),
            " expects ", w.size(0));
  DDL_CHECK(cin % p.groups == 0, "conv_transpose2d: groups=", p.groups, " does not divide the ", cin,
            " input channels of ", x.shape());
  Shape ys = x.shape();
  const int64_t c_dim = x.dim() - 3;
  ys[c_dim] = w.size(1) * p.groups;
  // As PyTorch: an empty batch or channel dim is fine, an empty image is not.
  DDL_CHECK(x.size(c_dim + 1) > 0 && x.size(c_dim + 2) > 0, "conv_transpose2d: input ", x.shape(),
            " has an empty spatial dim");
  for (int i = 0; i < 2; ++i) {
    DDL_CHECK(p.stride[i] > 0 && p.dilation[i] > 0 && p.padding[i] >= 0, "conv_transpose2d: stride [", p.stride[0],
              ", ", p.stride[1], "] and dilation [", p.dilation[0], ", ", p.dilation[1],
              "] must be positive and padding [", p.padding[0], ", ", p.padding[1], "] non-negative");
    DDL_CHECK(output_padding[i] >= 0 && (output_padding[i] < p.stride[i] || output_padding[i] < p.dilation[i]),
              "conv_transpose2d: output_padding [", output_padding[0], ", ", output_padding[1],
              "] must be non-negative and smaller than the stride [", p.stride[0], ", ", p.stride[1],
              "] or the dilation [", p.dilation[0], ", ", p.dilation[1], "]");
    ys[c_dim + 1 + i] = conv_transpose_out_size(x.size(c_dim + 1 + i), w.size(2 + i), p.stride[i], p.padding[i],
                                                p.dilation[i], output_padding[i]);
    DDL_CHECK(ys[c_dim + 1 + i] > 0, "conv_transpose2d: input ", x.shape(), " with weight ", w.shape(),
              " and padding [", p.padding[0], ", ", p.padding[1], "] gives a non-positive output size ", ys);
  }
  // conv2d_backward_input checks the remaining shape rules (groups, dtypes, devices).
  Tensor y = conv2d_backward_input(zero_extended(x, extra_rows(p, output_padding)), w, ys, p);
  if (bias.defined()) {
    DDL_CHECK(bias.dim() == 1 && bias.size(0) == ys[c_dim], "conv_transpose2d: bias must be [", ys[c_dim],
              "] for weight ", w.shape(), " and groups ", p.groups, ", got ", bias.shape());
    DDL_CHECK(bias.dtype() == y.dtype() && bias.device() == y.device(), "conv_transpose2d: bias is ", describe(bias),
              " but input is ", describe(x));
    Shape bs(std::vector<int64_t>(ys.size(), 1));
    bs[c_dim] = ys[c_dim];
    y.add_(bias.reshape(bs));
  }
  return y;
}

Tensor conv_transpose2d_backward_input(const Tensor& grad_y, const Tensor& w, const Shape& x_shape,
                                       const Conv2dParams& p) {
  Tensor gx = conv2d(grad_y, w, Tensor(), p);
  DDL_CHECK(gx.dim() == static_cast<int64_t>(x_shape.size()), "conv_transpose2d_backward_input: grad_y ",
            grad_y.shape(), " does not match input ", x_shape);
  const int64_t h = gx.dim() - 2;
  if (gx.size(h) == x_shape[h] && gx.size(h + 1) == x_shape[h + 1]) return gx;
  // Drop the zero rows of Note [Large output_padding].
  return gx.narrow(h, 0, x_shape[h]).narrow(h + 1, 0, x_shape[h + 1]).contiguous();
}

Tensor conv_transpose2d_backward_weight(const Tensor& x, const Tensor& grad_y, const Shape& w_shape,
                                        const Conv2dParams& p, std::array<int64_t, 2> output_padding) {
  return conv2d_backward_weight(zero_extended(x, extra_rows(p, output_padding)), grad_y, w_shape, p);
}

}  // namespace ddl
