// softmax / log_softmax on Variables. Both backward formulas need only the
// output y, so the closure saves y and not x. The double-backward forms (Note
// [Double backward]) recompute y from x with Variable ops instead of saving it.
#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/ops/softmax.h>
#include <ddl/tensor/ops/softmax.h>

namespace ddl {

using Grads = std::vector<Tensor>;
using VGrads = std::vector<Variable>;
using Needs = std::vector<bool>;

namespace {
// The differentiable backward of (log_)softmax for a 0-d x: the formula on x viewed as [1]
// (sum over dim 0 of a 0-d tensor is refused), then back to 0-d.
Variable softmax_grad_0d(const Variable& x, const Variable& g, int64_t dim, bool log) {
  const Variable x1 = x.reshape({1}), g1 = g.reshape({1});
  const Variable gx = log ? sub(g1, mul(softmax(x1, dim), sum(g1, {dim}, true)))
                          : mul(softmax(x1, dim), sub(g1, sum(mul(g1, softmax(x1, dim)), {dim}, true)));
  return gx.reshape({});
}
}  // namespace

Variable softmax(const Variable& x, int64_t dim) {
  if (autocast::needs_float32(x)) return softmax(autocast::to_float32(x), dim);  // See Note [Autocast]
  const Tensor y = ddl::softmax(x.data(), dim);
  return autograd::make_result(
      y, "SoftmaxBackward", {&x},
      [y, dim](const Tensor& g, const Needs&) -> Grads { return {softmax_backward(g, y, dim)}; },
      [x, dim](const Variable& g, const Needs&) -> VGrads {
        // dx = y * (g - sum(g * y, dim)); a 0-d x is one element along dim 0, as in the forward.
        if (x.dim() == 0) return {softmax_grad_0d(x, g, dim, false)};
        const Variable yv = softmax(x, dim);
        return {mul(yv, sub(g, sum(mul(g, yv), {dim}, true)))};
      });
}

Variable log_softmax(const Variable& x, int64_t dim) {
  if (autocast::needs_float32(x)) return log_softmax(autocast::to_float32(x), dim);  // See Note [Autocast]
  const Tensor y = ddl::log_softmax(x.data(), dim);
  return autograd::make_result(
      y, "LogSoftmaxBackward", {&x},
      [y, dim](const Tensor& g, const Needs&) -> Grads { return {log_softmax_backward(g, y, dim)}; },
      [x, dim](const Variable& g, const Needs&) -> VGrads {
        // dx = g - softmax(x) * sum(g, dim)
        if (x.dim() == 0) return {softmax_grad_0d(x, g, dim, true)};
        return {sub(g, mul(softmax(x, dim), sum(g, {dim}, true)))};
      });
}

}  // namespace ddl
