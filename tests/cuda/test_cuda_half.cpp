// float16/bfloat16 on the GPU against the CPU reference kernels: conversions
// bit for bit (one conversion function serves both), elementwise ops and sums,
// cuBLAS GEMM (16-bit operands, float32 compute) and cuDNN convolution with
// both gradients within one 16-bit rounding, and bf16 autocast of a linear
// layer with float32 master-weight gradients. Skipped (exit 77) without a GPU.
#include <catch2/catch.hpp>
#include <cstring>

#include "ddl.h"

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();

std::vector<uint16_t> bits(const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  std::vector<uint16_t> out(static_cast<size_t>(c.numel()));
  std::memcpy(out.data(), c.raw_data(), out.size() * 2);
  return out;
}

// GPU and CPU results agree within a couple of 16-bit roundings (the
// accumulation order differs, so the rounded result can differ by an ulp).
void require_close(const Tensor& gpu, const Tensor& cpu, DType h) {
  REQUIRE(gpu.device() == kCuda);
  REQUIRE(gpu.dtype() == cpu.dtype());
  const double rtol = h == DType::BFloat16 ? 2e-2 : 4e-3;
  REQUIRE(allclose(gpu.to(Device::cpu()).to(DType::Float64), cpu.to(DType::Float64), rtol, rtol));
}

}  // namespace

TEST_CASE("CUDA converts float32 to 16-bit floats bit for bit as the CPU", "[cuda][half]") {
  Generator g(3);
  const Tensor x = mul(randn({4097}, g), 1000.0);
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    REQUIRE(bits(x.to(kCuda).to(h)) == bits(x.to(h)));
    REQUIRE(to_vector<double>(x.to(h).to(kCuda).to(DType::Float32)) == to_vector<double>(x.to(h).to(DType::Float32)));
    // A strided 16-bit view copied on the device.
    const Tensor m = x.narrow(0, 0, 4096).reshape({64, 64}).to(h);
    REQUIRE(bits(m.to(kCuda).t().contiguous()) == bits(m.t().contiguous()));
  }
}

TEST_CASE("CUDA elementwise ops and sums on 16-bit tensors round as the CPU", "[cuda][half]") {
  Generator g(4);
  const Tensor a = randn({33, 65}, g), b = randn({65}, g);
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor ah = a.to(h), bh = b.to(h);
    REQUIRE(bits(add(ah.to(kCuda), bh.to(kCuda))) == bits(add(ah, bh)));
    REQUIRE(bits(relu(ah.to(kCuda))) == bits(relu(ah)));
    require_close(sum(ah.to(kCuda), {1}), sum(ah, {1}), h);
  }
}

TEST_CASE("cuBLAS and cuDNN 16-bit GEMM and convolution match the CPU reference", "[cuda][half]") {
  Generator g(5);
  const Tensor a = randn({4, 37, 70}, g), b = randn({70, 29}, g);
  const Tensor x = randn({2, 8, 9, 9}, g), w = randn({16, 8, 3, 3}, g), bias = randn({16}, g);
  Conv2dParams p;
  p.padding = {1, 1};
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    const Tensor ah = a.to(h), bh = b.to(h);
    require_close(matmul(ah.to(kCuda), bh.to(kCuda)), matmul(ah, bh), h);
    require_close(matmul(bh.to(kCuda).t(), ah.select(0, 1).to(kCuda).t()), matmul(bh.t(), ah.select(0, 1).t()), h);
    const Tensor xh = x.to(h), wh = w.to(h), bias_h = bias.to(h);
    const Tensor y = conv2d(xh, wh, bias_h, p);
    require_close(conv2d(xh.to(kCuda), wh.to(kCuda), bias_h.to(kCuda), p), y, h);
    const Tensor gy = mul(y.to(DType::Float32), 0.25).to(h);
    require_close(conv2d_backward_input(gy.to(kCuda), wh.to(kCuda), xh.shape(), p),
                  conv2d_backward_input(gy, wh, xh.shape(), p), h);
    require_close(conv2d_backward_weight(gy.to(kCuda), xh.to(kCuda), wh.shape(), p),
                  conv2d_backward_weight(gy, xh, wh.shape(), p), h);
  }
}

TEST_CASE("bf16 autocast on CUDA: a linear layer runs in bf16, its float32 weight gets a float32 gradient",
          "[cuda][half]") {
  Generator g(6);
  const Tensor x = randn({16, 32}, g), w = randn({8, 32}, g), b = randn({8}, g);
  Variable wc(w.to(kCuda), true), bc(b.to(kCuda), true), wh(w, true), bh(b, true);
  Variable yc, yh;
  {
    autocast::Guard guard(DType::BFloat16);
    yc = linear(Variable(x.to(kCuda)), wc, bc);
    yh = linear(Variable(x), wh, bh);
  }
  REQUIRE(yc.dtype() == DType::BFloat16);
  require_close(yc.data(), yh.data(), DType::BFloat16);
  sum(yc.to(DType::Float32)).backward();
  sum(yh.to(DType::Float32)).backward();
  REQUIRE(wc.grad().dtype() == DType::Float32);
  REQUIRE(allclose(wc.grad().to(Device::cpu()), wh.grad(), 2e-2, 2e-2));
}

TEST_CASE("16-bit random draws and dropout on CUDA equal the CPU's", "[cuda][half][random]") {
  for (DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    Generator gc(6), gg(6);
    REQUIRE(bits(rand({1000}, gg, {h, kCuda})) == bits(rand({1000}, gc, h)));
    REQUIRE(bits(bernoulli({1000}, 0.4, gg, {h, kCuda})) == bits(bernoulli({1000}, 0.4, gc, h)));
    Tensor ug = empty({1000}, {h, kCuda}), uc = empty({1000}, h);
    uniform_(ug, -1.0, 2.0, gg);
    uniform_(uc, -1.0, 2.0, gc);
    REQUIRE(bits(ug) == bits(uc));
    // randn's log and cos may differ by an ulp between glibc and libdevice (random.cu).
    require_close(randn({1000}, gg, {h, kCuda}), randn({1000}, gc, h), h);
    Generator gx(9);
    const Tensor x = randn({64, 33}, gx).to(h);
    const Tensor yg = dropout(Variable(x.to(kCuda)), 0.1, true, gg).data();
    const Tensor yc = dropout(Variable(x), 0.1, true, gc).data();
    REQUIRE(bits(yg) == bits(yc));
  }
}
