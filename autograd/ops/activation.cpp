// gelu, silu and leaky_relu on Variables. Exact gelu and silu are one node each with
// a closed-form backward (d/dx x*Phi(x) = Phi(x) + x*phi(x); silu's as PyTorch's); the
// tanh form and leaky_relu are compositions of existing differentiable ops.
#include <cmath>
#include <numbers>

#include <ddl/autograd/autocast.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/activation.h>
#include <ddl/autograd/ops/double_backward.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cpu/gelu.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl {

Variable gelu(const Variable& x, const std::string& approximate) {
  DDL_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '",
            approximate, "'");
  DDL_CHECK(x.defined() && is_floating(x.dtype()), "gelu: expected a float input");
  if (approximate == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    const double k = std::sqrt(2.0 / std::numbers::pi);
    // One op in PyTorch, on no autocast list: its pow must not widen it. See Note [Autocast].
    autocast::Guard off(autocast::low_dtype(), false);
    // In float32 for a 16-bit x, as PyTorch's kernel: in float16, x^3 overflows for |x| > 40 and
    // the backward's 0 * 3x^2 is NaN for |x| > 148.
    if (is_reduced_float(x.dtype())) return gelu(x.to(DType::Float32), approximate).to(x.dtype());
    const Variable inner = mul(add(x, mul(pow(x, 3.0), 0.044715)), k);
    return mul(mul(x, 0.5), add(tanh(inner), 1.0));
  }
  // In float32 for a 16-bit x, as PyTorch's kernels: in float16 the double backward's x^2
  // overflows for |x| > 256, and phi(x) (2 - x^2) is then 0 * -inf = NaN instead of -0.
  if (is_reduced_float(x.dtype())) return gelu(x.to(DType::Float32), approximate).to(x.dtype());
  const Tensor xd = x.data();
  if (xd.device().is_cpu() && xd.dtype() == DType::Float32) {
    // One pass each way on the CPU (tensor/cpu/gelu.h).
    const Tensor xc = xd.contiguous(), y = empty_like(xc), cdf = empty_like(xc);
    cpu::gelu_forward_f32(xc.data<float>(), y.data<float>(), cdf.data<float>(), xc.numel());
    return autograd::make_result(
        y, "GeluBackward", {&x},
        [xc, cdf](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
          const Tensor gc = g.contiguous(), dx = empty_like(xc);
          cpu::gelu_backward_f32(gc.data<float>(), xc.data<float>(), cdf.data<float>(), dx.data<float>(), xc.numel());
          return {dx};
        },
        autograd::gelu_double_backward(x));
  }
  const Tensor cdf = mul(add(ddl::erf(mul(xd, std::numbers::sqrt2 / 2)), 1.0), 0.5);  // Phi(x)
  return autograd::make_result(
      mul(xd, cdf), "GeluBackward", {&x},
      [xd, cdf](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        // phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
        const Tensor pdf = mul(exp(mul(mul(xd, xd), -0.5)), 0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
        return {mul(g, add(cdf, mul(xd, pdf)))};
      },
      autograd::gelu_double_backward(x));  // double_backward.cpp
}

// silu(x) = x / (1 + exp(-x)) with PyTorch's backward g·s·(1 + x·(1 − s)), s = sigmoid(x):
// as x·sigmoid(x) the chain rule formed g·x, which overflows near the float maximum and
// then multiplies 1 − s = 0 (NaN). 16-bit inputs compute in float32 and round once.
Variable silu(const Variable& x) {
  DDL_CHECK(x.defined() && is_floating(x.dtype()), "silu: expected a float input");
  if (is_reduced_float(x.dtype())) return silu(x.to(DType::Float32)).to(x.dtype());
  const Tensor xd = x.data();
  return autograd::make_result(
      div(xd, add(exp(neg(xd)), 1.0)), "SiluBackward", {&x},
      [xd](const Tensor& g, const std::vector<bool>&) -> std::vector<Tensor> {
        const Tensor s = sigmoid(xd);
        return {mul(g, mul(s, add(mul(xd, rsub(s, 1.0)), 1.0)))};
      },
      [x](const Variable& g, const std::vector<bool>&) -> std::vector<Variable> {
        const Variable s = sigmoid(x);
        return {mul(g, mul(s, add(mul(x, rsub(s, 1.0)), 1.0)))};
      });
}

Variable leaky_relu(const Variable& x, double negative_slope) {
  DDL_CHECK(x.defined(), "leaky_relu: input is undefined");
  // torch.nn.functional.leaky_relu has floating kernels only.
  DDL_CHECK(is_floating(x.dtype()), "leaky_relu: expected a floating input, got ", describe(x.data()));
  return where(gt(x.data(), 0.0), x, mul(x, negative_slope));
}

}  // namespace ddl
