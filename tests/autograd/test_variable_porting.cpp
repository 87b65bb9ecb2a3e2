// The Variable calls a LibTorch user reaches for first: to(DType) and to(Device) as
// recorded ops whose gradient returns in the source's dtype and on its device,
// squeeze() without a dim, and autograd::backward(roots, {}) meaning "ones" for
// one-element roots (torch.autograd.backward with grad_tensors=None). The device
// crossing runs where a GPU exists; without one, the CUDA request must fail cleanly.
#include <catch2/catch.hpp>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {
Tensor values(const Shape& s, DType dt) {
  std::vector<double> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25 * double(i) - 1.0;
  return from_vector(v, s).to(dt);
}
}  // namespace

TEST_CASE("Variable::to(DType): the gradient comes back in the source dtype", "[autograd][porting]") {
  Variable x(values({2, 3}, DType::Float32), true);
  const Variable y = x.to(DType::Float64);
  REQUIRE(y.dtype() == DType::Float64);
  REQUIRE(y.grad_fn() != nullptr);
  const Tensor c = add(values({2, 3}, DType::Float64), 3.0);
  sum(y * y * Variable(c)).backward();  // d/dx = 2 x c
  REQUIRE(x.grad().dtype() == DType::Float32);
  REQUIRE(allclose(x.grad().to(DType::Float64), mul(mul(x.data().to(DType::Float64), c), 2.0), 1e-6, 1e-6));

  // A cast to the same dtype is the variable itself, as in PyTorch.
  REQUIRE(x.to(DType::Float32).impl() == x.impl());
  // Float64 -> Float32 -> Float64 round trip: gradient by finite differences (float32 rounding
  // of the values is within the checker's tolerance for these small inputs).
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return v[0].to(DType::Float32).to(DType::Float64) * v[0]; },
                    {values({4}, DType::Float64)}, {.eps = 1e-3, .atol = 1e-4, .rtol = 1e-3});
}

TEST_CASE("Variable::to(Device): recorded, and the gradient returns to the source device", "[autograd][porting]") {
  Variable x(values({3}, DType::Float64), true);
  REQUIRE(x.to(Device::cpu()).impl() == x.impl());  // already there: the same variable
  if (!cuda::is_available()) {
    // No GPU here: the copy must fail with an error, not crash or return a CPU tensor.
    REQUIRE_THROWS_AS(x.to(Device::cuda(0)), Error);
    return;
  }
  const Variable g = x.to(Device::cuda(0));
  REQUIRE(g.device() == Device::cuda(0));
  REQUIRE(g.grad_fn() != nullptr);
  sum((g * g).to(Device::cpu()) * 2.0).backward();  // d/dx = 4 x
  REQUIRE(x.grad().device() == Device::cpu());
  REQUIRE(allclose(x.grad(), mul(x.data(), 4.0), 1e-12, 1e-12));
}

TEST_CASE("Variable::squeeze(): every size-1 dim, gradient in the input's shape", "[autograd][porting]") {
  Variable x(values({1, 3, 1, 2}, DType::Float64), true);
  const Variable y = x.squeeze();
  REQUIRE(y.shape() == Shape{3, 2});
  REQUIRE(x.squeeze(0).shape() == Shape{3, 1, 2});
  REQUIRE(x.squeeze(1).shape() == Shape{1, 3, 1, 2});  // not size 1: unchanged, as PyTorch
  REQUIRE(y.unsqueeze(0).shape() == Shape{1, 3, 2});
  sum(y * Variable(values({3, 2}, DType::Float64))).backward();
  REQUIRE(x.grad().shape() == Shape{1, 3, 1, 2});
  REQUIRE(allclose(x.grad().reshape({3, 2}), values({3, 2}, DType::Float64), 0, 0));
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return v[0].squeeze().t(); },
                    {values({2, 1, 3, 1}, DType::Float64)});
}

TEST_CASE("autograd::backward(roots, {}): ones for one-element roots", "[autograd][porting]") {
  Variable w(values({3}, DType::Float64), true);
  const Variable a = sum(w * w);                // d/dw = 2 w
  const Variable b = sum(w * 3.0);              // d/dw = 3
  const Variable c = (w * 0.5).sum({0}, true);  // shape [1]: one element counts too
  autograd::backward({a, b, c}, {});
  REQUIRE(allclose(w.grad(), add(mul(w.data(), 2.0), 3.5), 1e-12, 1e-12));

  // The same as passing ones explicitly.
  Variable v(values({3}, DType::Float64), true);
  autograd::backward({sum(v * v)}, {ones({}, DType::Float64)});
  Variable u(values({3}, DType::Float64), true);
  autograd::backward({sum(u * u)});
  REQUIRE(allclose(u.grad(), v.grad(), 0, 0));

  // A root with more than one element needs its gradient: the error names the root and shape.
  Variable z(values({2, 3}, DType::Float64), true);
  REQUIRE_THROWS_WITH(autograd::backward({sum(z), z * 2.0}, {}),
                      Catch::Contains("one-element") && Catch::Contains("[2, 3]") && Catch::Contains("root 1"));
  // A non-empty list must still have one entry per root.
  REQUIRE_THROWS_WITH(autograd::backward({sum(z), sum(z)}, {Tensor()}), Catch::Contains("2 roots but 1 gradients"));
}
