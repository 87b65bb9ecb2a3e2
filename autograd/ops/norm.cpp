// batch_norm on Variables: the forward saves x, the weight and the mean/invstd
// it normalised with; the backward is one fused kernel (tensor/ops/norm.h).
// Autocast leaves it alone, as torch.autocast (on neither of its lists): a
// 16-bit x (a bf16 conv's output) stays 16-bit, with float32 weight, bias and
// statistics, so conv -> BN -> ReLU -> pool keeps 16-bit activations.
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/norm.h>

namespace ddl {

Variable batch_norm(const Variable& x, const Variable& weight, const Variable& bias, Tensor running_mean,
                    Tensor running_var, bool training, double momentum, double eps) {
  const Tensor xd = x.data();
  const Tensor wd = weight.defined() ? weight.data() : Tensor();
  const Tensor bd = bias.defined() ? bias.data() : Tensor();
  const bool use_batch_stats = training || !running_mean.defined();
  BatchNormResult r = ddl::batch_norm(xd, wd, bd, running_mean, running_var, training, momentum, eps);

  // Only defined inputs get an edge; slot[k] says which gradient input k receives.
  std::vector<const Variable*> inputs{&x};
  std::vector<int> slot{0};
  if (weight.defined()) inputs.push_back(&weight), slot.push_back(1);
  if (bias.defined()) inputs.push_back(&bias), slot.push_back(2);
  const Tensor mean = r.save_mean, invstd = r.save_invstd;
  autograd::DiffBackwardFn diff_backward =  // double_backward.cpp
      autograd::batch_norm_double_backward(x, weight, bias, mean, invstd, use_batch_stats, eps);
  if (is_reduced_float(x.dtype())) {
    // See Note [Half compute]: the Variable-op backward runs in float32 on x widened by a
    // recorded cast (made only when it runs). The input gradient is rounded to x's dtype
    // once, and what reaches x through the cast comes back in x's dtype.
    diff_backward = [x, weight, bias, mean, invstd, use_batch_stats, eps](const Variable& g,
                                                                          const std::vector<bool>& needs) {
      std::vector<Variable> out = autograd::batch_norm_double_backward(
          x.to(DType::Float32), weight, bias, mean, invstd, use_batch_stats, eps)(g.to(DType::Float32), needs);
      if (out[0].defined()) out[0] = out[0].to(x.dtype());
      return out;
    };
  }
  return autograd::make_result(
      r.y, "BatchNormBackward", inputs,
      [xd, wd, mean, invstd, use_batch_stats, eps, slot](const Tensor& g, const std::vector<bool>& needs) {
        std::array<bool, 3> want{false, false, false};
        for (size_t k = 0; k < slot.size(); ++k) want[static_cast<size_t>(slot[k])] = needs[k];
        BatchNormGrads gr = batch_norm_backward(g, xd, wd, mean, invstd, use_batch_stats, eps, want);
        const Tensor all[3] = {gr.grad_input, gr.grad_weight, gr.grad_bias};
        std::vector<Tensor> out;
        for (int s : slot) out.push_back(all[s]);
        return out;
      },
      diff_backward);
}

}  // namespace ddl
