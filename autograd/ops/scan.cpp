// cumsum: y_i = x_0 + ... + x_i, so dL/dx_j = sum_{i >= j} dL/dy_i (a reversed cumsum).
#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/scan.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/tensor/ops/scan.h>

namespace ddl {

Variable cumsum(const Variable& x, int64_t dim) {
  if (autocast::needs_float32(x)) return cumsum(autocast::to_float32(x), dim);  // See Note [Autocast]
  return autograd::make_result(
      cumsum(x.data(), dim), "CumsumBackward", {&x},
      [dim](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> { return {cumsum_backward(g, dim)}; },
      // The reversed cumsum from differentiable ops, for double backward.
      [dim](const Variable& g, const std::vector<bool>&) -> std::vector<Variable> {
        return {flip(cumsum(flip(g, {dim}), dim), {dim})};
      });
}

}  // namespace ddl
