// Inverted dropout: y = x·m with m = bernoulli(1 − p) / (1 − p), so eval needs
// no rescaling; the backward multiplies by the same saved mask.
#include "autograd/ops/dropout.h"

#include "autograd/node.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"

namespace ddl {

Variable dropout(const Variable& x, double p, bool training, Generator& gen) {
  DDL_CHECK(p >= 0.0 && p <= 1.0, "dropout: p must be in [0, 1], got ", p);
  DDL_CHECK(x.defined(), "dropout: input is undefined");
  if (!training || p == 0.0) return x;
  const Tensor xd = x.data();
  DDL_CHECK(is_floating(xd.dtype()), "dropout: expected a float input, got ", xd.dtype());
  Tensor mask;
  if (p == 1.0) {
    mask = zeros(xd.shape(), {xd.dtype(), xd.device()});
  } else {
    mask = bernoulli(xd.shape(), 1.0 - p, gen, {xd.dtype(), xd.device()});
    mask.mul_(1.0 / (1.0 - p));
  }
  return autograd::make_result(
      ddl::mul(xd, mask), "DropoutBackward", {&x},
      [mask](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> { return {ddl::mul(g, mask)}; });
}

}  // namespace ddl
