// float16/bfloat16 on the GPU against the CPU reference kernels: conversions
// bit for bit (one conversion function serves both), elementwise ops and sums,
// cuBLAS GEMM (16-bit operands, float32 compute) and cuDNN convolution with
// both gradients within one 16-bit rounding, bf16 autocast of a linear layer
// with float32 master-weight gradients, and 16-bit batch_norm with float32
// parameters, alone (also over many chunks, repeated bit for bit) and after
// a bf16 conv. Skipped (exit 77) without a GPU.
#include <catch2/catch.hpp>
#include <cstring>

#include <ddl/ddl.h>

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

TEST_CASE("CUDA batch_norm on 16-bit inputs with float32 parameters matches the CPU", "[cuda][half][batch_norm]") {
  // Note [16-bit batch norm on CUDA]: ddl's kernels, not cuDNN. S = 25, S = 72 and [N, C].
  const auto f32_close = [](const Tensor& gpu, const Tensor& cpu) {
    REQUIRE(gpu.device() == kCuda);
    REQUIRE(gpu.dtype() == DType::Float32);
    REQUIRE(allclose(gpu.to(Device::cpu()), cpu, 1e-4, 1e-4));
  };
  for (DType h : {DType::Float16, DType::BFloat16}) {
    for (const Shape& shape : {Shape{4, 3, 5, 5}, Shape{2, 3, 8, 9}, Shape{16, 5}}) {
      for (bool affine : {true, false}) {
        INFO(h << " " << shape << (affine ? " affine" : " no affine"));
        Generator gen(11);
        const int64_t c = shape[1];
        const Tensor xh = add(mul(randn(shape, gen), 2.0), 0.5).to(h), gy = randn(shape, gen).to(h);
        const Tensor w = affine ? randn({c}, gen) : Tensor(), b = affine ? randn({c}, gen) : Tensor();
        const Tensor wc = affine ? w.to(kCuda) : Tensor(), bc = affine ? b.to(kCuda) : Tensor();
        Tensor rm = mul(randn({c}, gen), 0.1), rv = add(rand({c}, gen), 0.5);
        Tensor rmc = rm.to(kCuda), rvc = rv.to(kCuda);
        for (bool training : {true, false}) {
          INFO((training ? "training" : "eval"));
          const BatchNormResult r = batch_norm(xh, w, b, rm, rv, training, 0.1, 1e-5);
          const BatchNormResult rc = batch_norm(xh.to(kCuda), wc, bc, rmc, rvc, training, 0.1, 1e-5);
          require_close(rc.y, r.y, h);
          f32_close(rc.save_mean, r.save_mean);
          f32_close(rc.save_invstd, r.save_invstd);
          f32_close(rmc, rm);
          f32_close(rvc, rv);
          for (const std::array<bool, 3> needs : {std::array<bool, 3>{true, affine, affine}, {false, true, true}}) {
            const BatchNormGrads g = batch_norm_backward(gy, xh, w, r.save_mean, r.save_invstd, training, 1e-5, needs);
            const BatchNormGrads gc = batch_norm_backward(gy.to(kCuda), xh.to(kCuda), wc, rc.save_mean, rc.save_invstd,
                                                          training, 1e-5, needs);
            REQUIRE(gc.grad_input.defined() == needs[0]);
            if (needs[0]) require_close(gc.grad_input, g.grad_input, h);
            if (needs[1]) f32_close(gc.grad_weight, g.grad_weight);
            if (needs[2]) f32_close(gc.grad_bias, g.grad_bias);
          }
        }
      }
    }
  }
}

TEST_CASE("bf16 autocast on CUDA: conv -> BatchNorm2d -> ReLU stays bf16 and matches the CPU",
          "[cuda][half][batch_norm]") {
  manual_seed(5);
  nn::Conv2d conv(3, 8, 3, {.padding = 1});
  nn::BatchNorm2d bn(8);
  const auto conv_c = std::dynamic_pointer_cast<nn::Conv2d>(conv.clone());
  const auto bn_c = std::dynamic_pointer_cast<nn::BatchNorm2d>(bn.clone());
  conv_c->to(kCuda);
  bn_c->to(kCuda);
  Generator gen(12);
  const Tensor x = randn({4, 3, 8, 8}, gen), cot = randn({4, 8, 8, 8}, gen).to(DType::BFloat16);
  Variable y, yc;
  {
    autocast::Guard guard(DType::BFloat16);
    y = relu(bn.forward(conv.forward(Variable(x))));
    yc = relu(bn_c->forward(conv_c->forward(Variable(x.to(kCuda)))));
  }
  REQUIRE(yc.dtype() == DType::BFloat16);
  require_close(yc.data(), y.data(), DType::BFloat16);
  REQUIRE(bn_c->running_mean.dtype() == DType::Float32);
  REQUIRE(allclose(bn_c->running_mean.data().to(Device::cpu()), bn.running_mean.data(), 1e-2, 1e-3));
  REQUIRE(allclose(bn_c->running_var.data().to(Device::cpu()), bn.running_var.data(), 1e-2, 1e-3));
  y.backward(cot);
  yc.backward(cot.to(kCuda));
  REQUIRE(bn_c->weight.grad().dtype() == DType::Float32);
  REQUIRE(allclose(bn_c->weight.grad().to(Device::cpu()), bn.weight.grad(), 3e-2, 3e-2));
  REQUIRE(allclose(bn_c->bias.grad().to(Device::cpu()), bn.bias.grad(), 3e-2, 3e-2));
  REQUIRE(allclose(conv_c->weight.grad().to(Device::cpu()), conv.weight.grad(), 3e-2, 3e-2));
}

TEST_CASE("CUDA 16-bit batch_norm: chunked channel sums match the CPU and repeat bit for bit",
          "[cuda][half][batch_norm]") {
  // Note [Chunked channel sums]: several chunks whose ends fall inside a row
  // (M = 10336, S = 323), S == 1 with many row chunks, many channels with a
  // small plane, more elements than the elementwise kernels' threads (a
  // thread steps its channel: ChannelWalk in batch_norm.cu; {128, 5, 33, 31} also
  // moves it to the next channel), a chunk start that steps n and carries s
  // ({40, 3, 7, 9}: S = 63 does not divide 256), and an empty eval batch.
  const auto f32_same = [](const Tensor& a, const Tensor& b) {
    REQUIRE(to_vector<double>(a.to(Device::cpu())) == to_vector<double>(b.to(Device::cpu())));
  };
  const auto f32_close = [](const Tensor& gpu, const Tensor& cpu) {
    REQUIRE(gpu.device() == kCuda);
    REQUIRE(gpu.dtype() == DType::Float32);
    REQUIRE(allclose(gpu.to(Device::cpu()), cpu, 1e-4, 1e-4));
  };
  using Needs = std::array<bool, 3>;
  for (DType h : {DType::Float16, DType::BFloat16}) {
    for (const Shape& shape : {Shape{32, 4, 17, 19}, Shape{3000, 2}, Shape{2, 300, 4, 4}, Shape{64, 3, 60, 50},
                               Shape{40, 3, 7, 9}, Shape{128, 5, 33, 31}, Shape{0, 3, 4, 4}}) {
      const bool empty_batch = shape[0] == 0;
      for (bool training : {true, false}) {
        if (empty_batch && training) continue;  // training needs more than one value per channel
        INFO(h << " " << shape << (training ? " training" : " eval"));
        Generator gen(13);
        const int64_t c = shape[1];
        const Tensor xh = add(mul(randn(shape, gen), 2.0), 0.5).to(h), gy = randn(shape, gen).to(h);
        const Tensor w = randn({c}, gen), b = randn({c}, gen);
        const Tensor rm0 = mul(randn({c}, gen), 0.1), rv0 = add(rand({c}, gen), 0.5);
        Tensor rm = rm0.clone(), rv = rv0.clone();
        const BatchNormResult r = batch_norm(xh, w, b, rm, rv, training, 0.1, 1e-5);
        BatchNormResult first;
        Tensor first_rm;
        for (int run = 0; run < 2; ++run) {
          INFO("run " << run);
          Tensor rmc = rm0.to(kCuda), rvc = rv0.to(kCuda);
          const BatchNormResult rc = batch_norm(xh.to(kCuda), w.to(kCuda), b.to(kCuda), rmc, rvc, training, 0.1, 1e-5);
          if (!empty_batch) require_close(rc.y, r.y, h);
          REQUIRE(rc.y.shape() == r.y.shape());
          f32_close(rc.save_mean, r.save_mean);
          f32_close(rc.save_invstd, r.save_invstd);
          f32_close(rmc, rm);
          f32_close(rvc, rv);
          if (run == 0) {
            first = rc, first_rm = rmc;
          } else {
            REQUIRE(bits(rc.y) == bits(first.y));
            f32_same(rc.save_mean, first.save_mean);
            f32_same(rc.save_invstd, first.save_invstd);
            f32_same(rmc, first_rm);
          }
          for (const Needs needs : {Needs{true, true, true}, Needs{true, true, false}, Needs{true, false, true},
                                    Needs{false, true, true}}) {
            INFO("needs " << needs[0] << needs[1] << needs[2]);
            const BatchNormGrads g = batch_norm_backward(gy, xh, w, r.save_mean, r.save_invstd, training, 1e-5, needs);
            const BatchNormGrads g1 = batch_norm_backward(gy.to(kCuda), xh.to(kCuda), w.to(kCuda), rc.save_mean,
                                                          rc.save_invstd, training, 1e-5, needs);
            const BatchNormGrads g2 = batch_norm_backward(gy.to(kCuda), xh.to(kCuda), w.to(kCuda), rc.save_mean,
                                                          rc.save_invstd, training, 1e-5, needs);
            REQUIRE(g1.grad_input.defined() == needs[0]);
            REQUIRE(g1.grad_weight.defined() == needs[1]);
            REQUIRE(g1.grad_bias.defined() == needs[2]);
            if (needs[0]) {
              REQUIRE(g1.grad_input.shape() == g.grad_input.shape());
              if (!empty_batch) require_close(g1.grad_input, g.grad_input, h);
              REQUIRE(bits(g1.grad_input) == bits(g2.grad_input));
            }
            if (needs[1]) {
              f32_close(g1.grad_weight, g.grad_weight);
              f32_same(g1.grad_weight, g2.grad_weight);
            }
            if (needs[2]) {
              f32_close(g1.grad_bias, g.grad_bias);
              f32_same(g1.grad_bias, g2.grad_bias);
            }
          }
        }
      }
    }
  }
}
