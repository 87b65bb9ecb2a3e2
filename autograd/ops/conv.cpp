// Convolutions' forward and backward side by side. conv2d: the input gradient
// is a transposed convolution, the weight gradient a correlation of input and
// output gradient, the bias gradient a sum (all in tensor/ops/conv.h).
// conv_transpose2d is the same three kernels with roles swapped: its forward
// is conv2d's input gradient, its input gradient a conv2d forward.
#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/conv.h>
#include <ddl/autograd/ops/double_backward.h>

namespace ddl {

Variable conv2d(const Variable& x, const Variable& w, const Variable& bias, const Conv2dParams& p) {
  if (autocast::needs_low(x) || autocast::needs_low(w) || autocast::needs_low(bias))  // See Note [Autocast]
    return conv2d(autocast::to_low(x), autocast::to_low(w), autocast::to_low(bias), p);
  const Tensor xd = x.data(), wd = w.data();
  Tensor y = conv2d(xd, wd, bias.defined() ? bias.data() : Tensor(), p);
  auto backward = [xd, wd, p](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
    std::vector<Tensor> grads(needs.size());
    if (needs[0]) grads[0] = conv2d_backward_input(g, wd, xd.shape(), p);
    if (needs[1]) grads[1] = conv2d_backward_weight(g, xd, wd.shape(), p);
    if (needs.size() > 2 && needs[2]) grads[2] = conv2d_backward_bias(g);
    return grads;
  };
  auto diff_backward = autograd::conv2d_double_backward(x, w, bias.defined(), p);  // double_backward.cpp
  if (bias.defined())
    return autograd::make_result(std::move(y), "Conv2dBackward", {&x, &w, &bias}, backward, diff_backward);
  return autograd::make_result(std::move(y), "Conv2dBackward", {&x, &w}, backward, diff_backward);
}

Variable conv1d(const Variable& x, const Variable& w, const Variable& bias, int64_t stride, int64_t padding,
                int64_t dilation, int64_t groups) {
  DDL_CHECK(x.defined() && w.defined(), "conv1d: input and weight must be defined");
  DDL_CHECK(x.dim() == 2 || x.dim() == 3, "conv1d: input must be 3-D [N, C, L] or 2-D [C, L], got ", x.shape());
  DDL_CHECK(w.dim() == 3, "conv1d: weight must be 3-D [K, C/groups, k], got ", w.shape());
  DDL_CHECK(stride > 0 && dilation > 0 && padding >= 0 && groups > 0, "conv1d: stride ", stride, ", dilation ",
            dilation, " and groups ", groups, " must be positive and padding ", padding, " non-negative");
  DDL_CHECK(x.size(-1) + 2 * padding >= dilation * (w.size(2) - 1) + 1, "conv1d: kernel of size ", w.size(2),
            " (dilated extent ", dilation * (w.size(2) - 1) + 1, ") is longer than the padded input of length ",
            x.size(-1) + 2 * padding, " (input ", x.shape(), ")");
  Conv2dParams p;
  p.stride = {1, stride}, p.padding = {0, padding}, p.dilation = {1, dilation}, p.groups = groups;
  // A length-L sequence is a 1 x L image; the height dim is added before the spatial one.
  const int64_t h_dim = x.dim() - 1;
  return conv2d(x.unsqueeze(h_dim), w.unsqueeze(2), bias, p).squeeze(h_dim);
}

Variable conv_transpose2d(const Variable& x, const Variable& w, const Variable& bias, const Conv2dParams& p,
                          std::array<int64_t, 2> output_padding) {
  if (autocast::needs_low(x) || autocast::needs_low(w) || autocast::needs_low(bias))  // See Note [Autocast]
    return conv_transpose2d(autocast::to_low(x), autocast::to_low(w), autocast::to_low(bias), p, output_padding);
  const Tensor xd = x.data(), wd = w.data();
  Tensor y = conv_transpose2d(xd, wd, bias.defined() ? bias.data() : Tensor(), p, output_padding);
  auto backward = [xd, wd, p, output_padding](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
    std::vector<Tensor> grads(needs.size());
    // y = conv2d_backward_input(x, w): its adjoint in x is conv2d(g, w); in w it is
    // conv2d's weight gradient with x as the output gradient and g as the input.
    if (needs[0]) grads[0] = conv_transpose2d_backward_input(g, wd, xd.shape(), p);
    if (needs[1]) grads[1] = conv_transpose2d_backward_weight(xd, g, wd.shape(), p, output_padding);
    if (needs.size() > 2 && needs[2]) grads[2] = conv2d_backward_bias(g);
    return grads;
  };
  // double_backward.cpp
  auto diff_backward = autograd::conv_transpose2d_double_backward(x, w, bias.defined(), p, output_padding);
  if (bias.defined())
    return autograd::make_result(std::move(y), "ConvTranspose2dBackward", {&x, &w, &bias}, backward, diff_backward);
  return autograd::make_result(std::move(y), "ConvTranspose2dBackward", {&x, &w}, backward, diff_backward);
}

}  // namespace ddl
