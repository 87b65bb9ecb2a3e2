// softmax / log_softmax on Variables. Both backward formulas need only the
// output y, so the closure saves y and not x. The double-backward forms (Note
// [Double backward]) recompute y from x with Variable ops instead of saving it.
#include "autograd/ops/softmax.h"

#include "autograd/autocast.h"
#include "autograd/node.h"
#include "autograd/ops/elementwise.h"
#include "autograd/ops/reduce.h"
#include "tensor/softmax.h"

namespace ddl {

using Grads = std::vector<Tensor>;
using VGrads = std::vector<Variable>;
using Needs = std::vector<bool>;

Variable softmax(const Variable& x, int64_t dim) {
  if (autocast::needs_float32(x)) return softmax(autocast::to_float32(x), dim);  // See Note [Autocast]
  const Tensor y = ddl::softmax(x.data(), dim);
  return autograd::make_result(
      y, "SoftmaxBackward", {&x},
      [y, dim](const Tensor& g, const Needs&) -> Grads { return {softmax_backward(g, y, dim)}; },
      [x, dim](const Variable& g, const Needs&) -> VGrads {
        // dx = y * (g - sum(g * y, dim))
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
        return {sub(g, mul(softmax(x, dim), sum(g, {dim}, true)))};
      });
}

}  // namespace ddl
