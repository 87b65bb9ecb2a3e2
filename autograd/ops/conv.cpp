// conv2d forward and backward side by side: the input gradient is a
// transposed convolution, the weight gradient a correlation of input and
// output gradient, the bias gradient a sum (all in tensor/conv.h).
#include "autograd/ops/conv.h"

#include "autograd/node.h"
#include "autograd/ops/double_backward.h"

namespace ddl {

Variable conv2d(const Variable& x, const Variable& w, const Variable& bias, const Conv2dParams& p) {
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

}  // namespace ddl
