// conv_transpose2d frontend: computes the output shape and runs conv2d's
// input-gradient kernel (any device that has one), then adds the bias.
#include "tensor/conv_transpose.h"

#include "tensor/elementwise.h"

namespace ddl {

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
  const int64_t cin = x.size(x.dim() - 3);
  DDL_CHECK(w.size(0) == cin, "conv_transpose2d: input ", x.shape(), " has ", cin, " channels but weight ", w.shape(),
            " expects ", w.size(0));
  DDL_CHECK(cin % p.groups == 0, "conv_transpose2d: groups=", p.groups, " does not divide the ", cin,
            " input channels of ", x.shape());
  Shape ys = x.shape();
  const int64_t c_dim = x.dim() - 3;
  ys[c_dim] = w.size(1) * p.groups;
  for (int i = 0; i < 2; ++i) {
    DDL_CHECK(p.stride[i] > 0 && p.dilation[i] > 0 && p.padding[i] >= 0, "conv_transpose2d: stride [", p.stride[0],
              ", ", p.stride[1], "] and dilation [", p.dilation[0], ", ", p.dilation[1],
              "] must be positive and padding [", p.padding[0], ", ", p.padding[1], "] non-negative");
    DDL_CHECK(output_padding[i] >= 0 && output_padding[i] < p.stride[i], "conv_transpose2d: output_padding [",
              output_padding[0], ", ", output_padding[1], "] must be non-negative and smaller than the stride [",
              p.stride[0], ", ", p.stride[1], "]");
    ys[c_dim + 1 + i] = conv_transpose_out_size(x.size(c_dim + 1 + i), w.size(2 + i), p.stride[i], p.padding[i],
                                                p.dilation[i], output_padding[i]);
    DDL_CHECK(ys[c_dim + 1 + i] > 0, "conv_transpose2d: input ", x.shape(), " with weight ", w.shape(),
              " and padding [", p.padding[0], ", ", p.padding[1], "] gives a non-positive output size ", ys);
  }
  // conv2d_backward_input checks the remaining shape rules (groups, dtypes, devices).
  Tensor y = conv2d_backward_input(x, w, ys, p);
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

}  // namespace ddl
