// softmax / log_softmax on Variables. Both backward formulas need only the
// output y, so the closure saves y and not x.
#include "autograd/ops/softmax.h"

#include "autograd/node.h"
#include "tensor/softmax.h"

namespace ddl {

Variable softmax(const Variable& x, int64_t dim) {
  const Tensor y = ddl::softmax(x.data(), dim);
  return autograd::make_result(y, "SoftmaxBackward", {&x},
                               [y, dim](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
                                 return {softmax_backward(g, y, dim)};
                               });
}

Variable log_softmax(const Variable& x, int64_t dim) {
  const Tensor y = ddl::log_softmax(x.data(), dim);
  return autograd::make_result(y, "LogSoftmaxBackward", {&x},
                               [y, dim](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
                                 return {log_softmax_backward(g, y, dim)};
                               });
}

}  // namespace ddl
