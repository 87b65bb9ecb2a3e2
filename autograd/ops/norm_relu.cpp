// batch_norm + ReLU as one autograd node (Note [Batch norm + ReLU] in
// tensor/cpu/batch_norm.cpp). It saves x and the output y; ReLU's gradient mask is
// read from y. Double backward composes the mask with batch_norm's own rule.
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/compare.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/norm.h>
#include <ddl/autograd/ops/norm_relu.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/norm_relu.h>

namespace ddl::detail {

Variable batch_norm_relu(const Variable& x, const Variable& weight, const Variable& bias, Tensor running_mean,
                         Tensor running_var, bool training, double momentum, double eps) {
  if (!x.defined() || !batch_norm_relu_fusable(x.data()))
    return relu(ddl::batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps));
  const Tensor xd = x.data();
  const Tensor wd = weight.defined() ? weight.data() : Tensor();
  const Tensor bd = bias.defined() ? bias.data() : Tensor();
  const bool use_batch_stats = training || !running_mean.defined();
  BatchNormResult r = batch_norm_relu(xd, wd, bd, running_mean, running_var, training, momentum, eps);

  // Only defined inputs get an edge; slot[k] says which gradient input k receives.
  std::vector<const Variable*> inputs{&x};
  std::vector<int> slot{0};
  if (weight.defined()) inputs.push_back(&weight), slot.push_back(1);
  if (bias.defined()) inputs.push_back(&bias), slot.push_back(2);
  const Tensor mean = r.save_mean, invstd = r.save_invstd, y = r.y;
  const autograd::DiffBackwardFn bn_diff =
      autograd::batch_norm_double_backward(x, weight, bias, mean, invstd, use_batch_stats, eps);
  return autograd::make_result(
      y, "BatchNormReluBackward", inputs,
      [xd, y, wd, mean, invstd, use_batch_stats, eps, slot](const Tensor& g, const std::vector<bool>& needs) {
        std::array<bool, 3> want{false, false, false};
        for (size_t k = 0; k < slot.size(); ++k) want[static_cast<size_t>(slot[k])] = needs[k];
        BatchNormGrads gr = batch_norm_relu_backward(g, xd, y, wd, mean, invstd, use_batch_stats, eps, want);
        const Tensor all[3] = {gr.grad_input, gr.grad_weight, gr.grad_bias};
        std::vector<Tensor> out;
        for (int s : slot) out.push_back(all[s]);
        return out;
      },
      [y, bn_diff](const Variable& g, const std::vector<bool>& needs) {
        // ReLU's rule as a constant select (elementwise.cpp's relu): pass unless y <= 0.
        const Tensor pass = maximum(gt(y, 0.0), ne(y, y));
        return bn_diff(where(pass, g, Variable(zeros({}, TensorOptions(g.dtype(), g.device())))), needs);
      });
}

}  // namespace ddl::detail
