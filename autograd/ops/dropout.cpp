// Inverted dropout: y = x·m with m = bernoulli(1 − p) / (1 − p), so eval needs
// no rescaling; the backward multiplies by the same saved mask.
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/dropout.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl {

Variable dropout(const Variable& x, double p, bool training, Generator& gen) {
  DDL_CHECK(p >= 0.0 && p <= 1.0, "dropout: p must be in [0, 1], got ", p);
  DDL_CHECK(x.defined(), "dropout: input is undefined");
  if (!training || p == 0.0) return x;
  const Tensor xd = x.data();
  // PyTorch multiplies by a zero mask when p = 1, which works for any dtype; any
  // other p scales by 1 / (1 - p) and refuses an integer input.
  if (p == 1.0 && !is_floating(xd.dtype())) return Variable(zeros_like(xd));
  DDL_CHECK(is_floating(xd.dtype()), "dropout: expected a float input, got ", xd.dtype());
  // A 16-bit input gets a float32 mask and is scaled in float32, then rounded once, as
  // PyTorch's fused dropout does: a 16-bit scale 1 / (1 - p) would be rounded itself
  // (1 / 0.9 becomes 1.109375 in bfloat16) and bias every kept value.
  const DType dt = xd.dtype();
  const bool reduced = is_reduced_float(dt);
  Tensor mask;
  if (p == 1.0) {
    mask = zeros(xd.shape(), {reduced ? DType::Float32 : dt, xd.device()});
  } else {
    mask = bernoulli(xd.shape(), 1.0 - p, gen, {reduced ? DType::Float32 : dt, xd.device()});
    mask.mul_(1.0 / (1.0 - p));
  }
  auto apply = [mask, dt, reduced](const Tensor& v) {
    return reduced ? ddl::mul(v.to(DType::Float32), mask).to(dt) : ddl::mul(v, mask);
  };
  return autograd::make_result(
      apply(xd), "DropoutBackward", {&x},
      [apply](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> { return {apply(g)}; });
}

}  // namespace ddl
