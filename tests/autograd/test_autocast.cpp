// autocast::Guard: which ops run in bfloat16/float16 and which in float32,
// values and float32 master-weight gradients against PyTorch 1.13's CPU bf16
// autocast (tests/golden/mixed_precision.py), and a small CNN trained under
// bf16 autocast reaching the float32 run's loss with float32 weights.
#include <catch2/catch.hpp>
#include <functional>

#include "tests/common/golden_case.h"
#include <ddl/ddl.h>

using namespace ddl;
using test::checksum;
using test::seq;

TEST_CASE("Guard enables autocast for its scope and restores the outer state", "[autocast]") {
  REQUIRE_FALSE(autocast::is_enabled());
  {
    autocast::Guard outer(DType::BFloat16);
    REQUIRE(autocast::is_enabled());
    REQUIRE(autocast::low_dtype() == DType::BFloat16);
    {
      autocast::Guard inner(DType::Float16, false);
      REQUIRE_FALSE(autocast::is_enabled());
    }
    REQUIRE(autocast::is_enabled());
    REQUIRE(autocast::low_dtype() == DType::BFloat16);
  }
  REQUIRE_FALSE(autocast::is_enabled());
  REQUIRE_THROWS_WITH(autocast::Guard(DType::Float32), Catch::Contains("Float16 or BFloat16"));
}

namespace {

// Inputs seq(shape_k, 0.3 + 0.2 k, 0.1 k) as float32 leaves, f under bf16 autocast,
// backward with seq(y.shape, 0.9, 0.1); checks y's dtype and checksum, and each
// gradient's dtype (float32) and checksum, within bfloat16's precision.
void check_autocast_golden(const std::function<Variable(const std::vector<Variable>&)>& f,
                           const std::vector<Shape>& shapes, DType y_dtype, const Shape& y_shape, double y_checksum,
                           const std::vector<double>& grad_checksums) {
  std::vector<Variable> xs;
  for (size_t k = 0; k < shapes.size(); ++k)
    xs.emplace_back(seq(shapes[k], 0.3 + 0.2 * double(k), 0.1 * double(k)).to(DType::Float32), true);
  Variable y;
  {
    autocast::Guard guard(DType::BFloat16);
    y = f(xs);
  }
  REQUIRE(y.dtype() == y_dtype);
  REQUIRE(y.shape() == y_shape);
  // bfloat16 keeps 8 significant bits: elements agree to ~2^-8 relative, sums of them a little better.
  REQUIRE(checksum(y.data()) == Approx(y_checksum).epsilon(1e-2).margin(2e-2));
  y.backward(seq(y.shape(), 0.9, 0.1).to(y.dtype()));
  for (size_t k = 0; k < xs.size(); ++k) {
    INFO("gradient of input " << k);
    REQUIRE(xs[k].grad().dtype() == DType::Float32);  // master weights get float32 gradients
    REQUIRE(checksum(xs[k].grad()) == Approx(grad_checksums[k]).epsilon(2e-2).margin(2e-2));
  }
}

}  // namespace

TEST_CASE("linear, conv2d and matmul run in bfloat16 with float32 gradients, as PyTorch", "[autocast]") {
  check_autocast_golden([](const std::vector<Variable>& v) { return linear(v[0], v[1], v[2]); },
                        {{5, 12}, {7, 12}, {7}}, DType::BFloat16, {5, 7}, 7.812056118,
                        {1.225652283, 0.5165550793, -2.578900617});
  Conv2dParams p;
  p.padding = {1, 1};
  check_autocast_golden([&](const std::vector<Variable>& v) { return conv2d(v[0], v[1], v[2], p); },
                        {{2, 3, 6, 6}, {4, 3, 3, 3}, {4}}, DType::BFloat16, {2, 4, 6, 6}, 9.679466117,
                        {22.34131134, 0.3710366996, 0.6304006443});
  check_autocast_golden([](const std::vector<Variable>& v) { return matmul(v[0], v[1]); }, {{3, 4, 9}, {9, 6}},
                        DType::BFloat16, {3, 4, 6}, -0.6439367667, {-0.223143991, 2.929018145});
}

TEST_CASE("softmax, losses and norms widen 16-bit inputs to float32", "[autocast]") {
  // log_softmax after linear: float32 out (CUDA autocast's list; the golden script widens explicitly).
  check_autocast_golden([](const std::vector<Variable>& v) { return log_softmax(linear(v[0], v[1], v[2]), 1); },
                        {{5, 12}, {7, 12}, {7}}, DType::Float32, {5, 7}, -33.25973675,
                        {1.186940376, 0.5029698087, -2.531214059});
  autocast::Guard guard(DType::Float16);
  const Variable x(seq({4, 3}, 0.7, 0.2).to(DType::Float16), true);
  REQUIRE(softmax(x, 1).dtype() == DType::Float32);
  const Tensor target = from_vector<int64_t>({0, 2, 1, 1}, {4});
  const Variable loss = cross_entropy(x, target);
  REQUIRE(loss.dtype() == DType::Float32);
  REQUIRE(mse_loss(x, Variable(zeros({4, 3}))).dtype() == DType::Float32);
  loss.backward();
  REQUIRE(x.grad().dtype() == DType::Float16);  // the gradient of a leaf keeps the leaf's dtype
  // float64 is never cast, as in PyTorch.
  REQUIRE(linear(Variable(ones({2, 3}, DType::Float64)), Variable(ones({4, 3}, DType::Float64)), Variable()).dtype() ==
          DType::Float64);
  // Outside autocast nothing is cast: float32 stays float32, a float16 softmax stays float16.
  autocast::Guard off(DType::Float16, false);
  REQUIRE(linear(Variable(ones({2, 3})), Variable(ones({4, 3})), Variable()).dtype() == DType::Float32);
  REQUIRE(softmax(x, 1).dtype() == DType::Float16);
}

namespace {

struct Cnn {
  Variable w1, b1, w2, b2;
};

// 4 conv filters (3x3, pad 1) -> ReLU -> linear to 3 classes on 1x6x6 images;
// the same float32 initial weights for every run.
Cnn make_cnn() {
  Generator g(5);
  return {Variable(mul(randn({4, 1, 3, 3}, g), 0.3), true), Variable(zeros({4}), true),
          Variable(mul(randn({3, 4 * 36}, g), 0.05), true), Variable(zeros({3}), true)};
}

Variable forward(const Cnn& m, const Tensor& x) {
  Conv2dParams p;
  p.padding = {1, 1};
  const Variable h = relu(conv2d(Variable(x), m.w1, m.b1, p));
  return linear(h.reshape({x.size(0), 4 * 36}), m.w2, m.b2);
}

// Full-batch SGD; returns the final loss. The class of an image is the band
// of rows (top, middle, bottom) with the largest sum.
double train(std::optional<DType> low, Cnn& m, std::vector<double>* losses = nullptr) {
  Generator g(9);
  const Tensor x = randn({48, 1, 6, 6}, g);
  const Tensor bands = sum(x.reshape({48, 3, 12}), {2});
  const Tensor y = argmax(bands, 1);
  optim::SGD opt({m.w1, m.b1, m.w2, m.b2}, optim::SGDOptions(0.2).momentum(0.9));
  double last = 0;
  for (int step = 0; step < 25; ++step) {
    opt.zero_grad();
    Variable loss;
    {
      autocast::Guard guard(low.value_or(DType::BFloat16), low.has_value());
      loss = cross_entropy(forward(m, x), y);
    }
    loss.backward();
    opt.step();
    last = loss.data().item();
    if (losses) losses->push_back(last);
  }
  return last;
}

}  // namespace

TEST_CASE("a small CNN trained under bf16 autocast reaches the float32 loss with float32 weights", "[autocast]") {
  Cnn fp32 = make_cnn(), mixed = make_cnn();
  std::vector<double> l32, l16;
  const double final32 = train(std::nullopt, fp32, &l32);
  const double final16 = train(DType::BFloat16, mixed, &l16);
  INFO("float32 " << l32.front() << " -> " << final32 << ", bf16 autocast " << l16.front() << " -> " << final16);
  REQUIRE(final32 < 0.5 * l32.front());  // it learns
  REQUIRE(final16 < 0.5 * l16.front());
  REQUIRE(std::abs(final16 - final32) < 1e-3 + 0.1 * final32);
  for (const Variable* w : {&mixed.w1, &mixed.b1, &mixed.w2, &mixed.b2}) {
    REQUIRE(w->dtype() == DType::Float32);
    REQUIRE(w->grad().dtype() == DType::Float32);
  }
  // Not a no-op: the bf16 run's weights differ from the float32 run's.
  REQUIRE_FALSE(allclose(mixed.w2.data(), fp32.w2.data(), 0, 1e-7));
}

TEST_CASE("VGG-11 (with and without BatchNorm) and ResNet-18 train under bf16 autocast with float32 parameters",
          "[autocast]") {
  Generator g(21);
  const Tensor x = randn({2, 3, 32, 32}, g);
  const Tensor y = from_vector<int64_t>({3, 7}, {2});
  for (const char* name : {"vgg11", "vgg11_bn", "resnet18"}) {
    INFO(name);
    manual_seed(1);
    const std::shared_ptr<nn::Module> model = nn::make_model(name, 10, 3, 32);
    const Variable loss32 = cross_entropy(model->forward(Variable(x)), y);
    Variable loss16;
    {
      autocast::Guard guard(DType::BFloat16);
      loss16 = cross_entropy(model->forward(Variable(x)), y);
    }
    REQUIRE(loss16.dtype() == DType::Float32);
    REQUIRE(loss16.data().item() == Approx(loss32.data().item()).epsilon(5e-2));
    loss16.backward();
    for (const Variable& p : model->parameters()) {
      REQUIRE(p.dtype() == DType::Float32);
      REQUIRE(p.grad().defined());
      REQUIRE(p.grad().dtype() == DType::Float32);
      REQUIRE(std::isfinite(sum(p.grad()).item()));
    }
  }
}

TEST_CASE("a TransformerEncoderLayer with dropout trains under bf16 autocast", "[autocast][dropout]") {
  // Its second dropout sees linear2's bfloat16 output: the mask is drawn for a 16-bit input.
  manual_seed(3);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(16, 2).dim_feedforward(32).dropout(0.2).batch_first(true));
  Generator g(8);
  const Tensor x = randn({4, 5, 16}, g);
  Variable out;
  {
    autocast::Guard guard(DType::BFloat16);
    out = layer.forward(Variable(x));
  }
  REQUIRE(std::isfinite(sum(out.data().to(DType::Float32)).item()));
  out.to(DType::Float32).mean().backward();
  for (const Variable& p : layer.parameters()) {
    REQUIRE(p.dtype() == DType::Float32);
    REQUIRE(p.grad().defined());
    REQUIRE(std::isfinite(sum(p.grad()).item()));
  }
}

namespace {

// ||a - b|| / ||b||, in float64.
double relative_error(const Tensor& a, const Tensor& b) {
  const Tensor d = sub(a.to(DType::Float64), b.to(DType::Float64));
  const Tensor r = b.to(DType::Float64);
  return std::sqrt(sum(mul(d, d)).item() / sum(mul(r, r)).item());
}

// One backward step of loss() in float32, then one under `low` autocast: every
// parameter gets a gradient of its own dtype, within 16-bit precision of the
// float32 one. The loss is sum(y * c) for a fixed float32 c, so a 16-bit y meets
// a float32 tensor in the last op too.
void check_mixed_backward(const std::function<Variable()>& forward, const std::vector<Variable>& params,
                          DType low = DType::BFloat16, double tol = 3e-2) {
  auto loss = [&] {
    const Variable y = forward();
    return sum(mul(y, Variable(seq(y.shape(), 0.9, 0.1).to(DType::Float32))));
  };
  for (Variable p : params) p.zero_grad();
  loss().backward();
  std::vector<Tensor> ref;
  for (const Variable& p : params) ref.push_back(p.grad().clone());
  for (Variable p : params) p.zero_grad();
  Variable l;
  {
    autocast::Guard guard(low);
    l = loss();
  }
  l.backward();
  for (size_t k = 0; k < params.size(); ++k) {
    INFO("parameter " << k << " of shape " << params[k].shape());
    REQUIRE(params[k].grad().defined());
    REQUIRE(params[k].grad().dtype() == params[k].dtype());
    REQUIRE(relative_error(params[k].grad(), ref[k]) < tol);
  }
}

Variable leaf(const Shape& s, double a, DType dtype = DType::Float32) {
  return Variable(seq(s, a, 0.3, 0.5).to(dtype), true);
}

}  // namespace

// A 16-bit and a float32 tensor meeting in one op give a float32 result, so its
// backward hands the 16-bit branch a float32 gradient; the engine casts it to the
// input's dtype, as PyTorch's validate_outputs, before the 16-bit backward runs.
TEST_CASE("a float32 residual around a 16-bit linear trains under autocast", "[autocast]") {
  const Variable x = leaf({4, 8}, 0.7), w = leaf({8, 8}, 0.37), b = leaf({8}, 1.1);
  for (DType low : {DType::BFloat16, DType::Float16}) {
    INFO(low);
    check_mixed_backward([&] { return add(x, linear(x, w, b)); }, {x, w, b}, low);
  }
}

TEST_CASE("a TransformerEncoderLayer without dropout trains under bf16 autocast", "[autocast]") {
  manual_seed(4);
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(16, 2).dropout(0.0));
  const Variable x = leaf({5, 3, 16}, 0.45);
  std::vector<Variable> params = layer.parameters();
  params.push_back(x);
  // Rounding to bf16 moves a few of the 2048 ReLU inputs across 0: linear1's bias
  // gradient, their sum, is ~4% off the float32 one (the others 0.3-2%).
  check_mixed_backward([&] { return layer.forward(x); }, params, DType::BFloat16, 6e-2);
}

TEST_CASE("conv2d with a float32 residual, and conv2d into an affine group_norm, train under bf16 autocast",
          "[autocast]") {
  Conv2dParams p;
  p.padding = {1, 1};
  const Variable x = leaf({2, 4, 5, 5}, 0.31), w = leaf({4, 4, 3, 3}, 0.53), b = leaf({4}, 0.9);
  SECTION("residual") {
    check_mixed_backward([&] { return add(x, conv2d(x, w, b, p)); }, {x, w, b});
  }
  const Variable gw = leaf({4}, 0.8), gb = leaf({4}, 1.3);
  SECTION("group_norm") {
    check_mixed_backward([&] { return group_norm(conv2d(x, w, b, p), 2, gw, gb, 1e-5); }, {x, w, b, gw, gb});
  }
}

TEST_CASE("the engine casts each gradient to its input's dtype without autocast too", "[autocast]") {
  // A bf16 conv scaled by a float32 per-channel factor (as an affine norm's weight), and a
  // float32 gradient passed to backward() for a bf16 root (cast as PyTorch's engine does).
  Conv2dParams p;
  p.padding = {1, 1};
  Variable x = leaf({2, 3, 5, 5}, 0.31, DType::BFloat16), w = leaf({4, 3, 3, 3}, 0.53, DType::BFloat16);
  Variable s = leaf({1, 4, 1, 1}, 0.8);
  const Variable x32(x.data().to(DType::Float32), true), w32(w.data().to(DType::Float32), true);
  const Tensor c = seq({2, 4, 5, 5}, 0.9, 0.1).to(DType::Float32);
  sum(mul(mul(conv2d(x, w, Variable(), p), s), Variable(c))).backward();
  const Tensor gs = s.grad().clone();
  s.zero_grad();
  sum(mul(mul(conv2d(x32, w32, Variable(), p), s), Variable(c))).backward();
  REQUIRE(x.grad().dtype() == DType::BFloat16);
  REQUIRE(w.grad().dtype() == DType::BFloat16);
  REQUIRE(gs.dtype() == DType::Float32);
  REQUIRE(relative_error(x.grad(), x32.grad()) < 2e-2);
  REQUIRE(relative_error(w.grad(), w32.grad()) < 2e-2);
  REQUIRE(relative_error(gs, s.grad()) < 2e-2);
  x.zero_grad();
  conv2d(x, w, Variable(), p).backward(c);
  REQUIRE(x.grad().dtype() == DType::BFloat16);
}

TEST_CASE("a gradient reaching a 16-bit input in float32 is cast under create_graph too", "[autocast]") {
  // Gradient penalty: d/dw of |d loss / dx|^2 through a float32 residual around a bf16 linear.
  Variable x = leaf({4, 8}, 0.7), w = leaf({8, 8}, 0.37), b = leaf({8}, 1.1);
  auto penalty = [&](bool mixed) {
    Variable y;
    {
      autocast::Guard guard(DType::BFloat16, mixed);
      y = add(x, linear(x, w, b));
    }
    // Outside autocast, so that the recorded backward ops do not cast for it.
    const Variable loss = sum(mul(y, Variable(seq(y.shape(), 0.9, 0.1).to(DType::Float32))));
    const Variable gx = autograd::grad({loss}, {x}, {}, std::nullopt, true)[0];
    REQUIRE(gx.dtype() == DType::Float32);
    return sum(mul(gx, gx));
  };
  w.zero_grad();
  penalty(false).backward();
  const Tensor ref = w.grad().clone();
  w.zero_grad();
  penalty(true).backward();
  REQUIRE(w.grad().dtype() == DType::Float32);
  REQUIRE(relative_error(w.grad(), ref) < 3e-2);
  // The inner gradient's dtype also follows the 16-bit input when it is not a leaf.
  Variable h;
  {
    autocast::Guard guard(DType::BFloat16);
    h = linear(x, w, b);
  }
  const Variable g = autograd::grad({sum(mul(h, Variable(ones({4, 8}))))}, {h}, {}, std::nullopt, true)[0];
  REQUIRE(h.dtype() == DType::BFloat16);
  REQUIRE(g.dtype() == DType::BFloat16);
  // grad() casts a float32 grad_output given for a 16-bit output, as backward() does.
  const Variable gw = autograd::grad({h}, {w}, {Variable(ones({4, 8}))}, true)[0];
  REQUIRE(gw.dtype() == DType::Float32);
  w.zero_grad();
  sum(h).backward();
  REQUIRE(relative_error(gw.data(), w.grad()) < 1e-6);
}

// PyTorch's autocast casts every floating input but float64 whose dtype is not the
// autocast dtype (cached_cast in aten/src/ATen/autocast_mode.h), not only float32 ones.
TEST_CASE("autocast casts a bfloat16 input to float16 under float16 autocast, and back", "[autocast]") {
  Variable x16 = leaf({4, 8}, 0.7, DType::BFloat16), w = leaf({6, 8}, 0.37), b = leaf({6}, 1.1);
  const Variable x32(x16.data().to(DType::Float32), true);
  Variable y;
  {
    autocast::Guard guard(DType::Float16);
    y = linear(x16, w, b);
    REQUIRE(y.dtype() == DType::Float16);
    REQUIRE(matmul(x16, w.t()).dtype() == DType::Float16);
    // float64 and integers are left alone.
    REQUIRE(matmul(Variable(ones({2, 3}, DType::Float64)), Variable(ones({3, 2}, DType::Float64))).dtype() ==
            DType::Float64);
  }
  {
    autocast::Guard guard(DType::BFloat16);
    REQUIRE(linear(Variable(ones({2, 3}, DType::Float16)), w.slice(1, 0, 3), Variable()).dtype() == DType::BFloat16);
  }
  const Tensor c = seq(y.shape(), 0.9, 0.1).to(DType::Float32);
  sum(mul(y, Variable(c))).backward();
  const Tensor gw = w.grad().clone(), gb = b.grad().clone();
  REQUIRE(x16.grad().dtype() == DType::BFloat16);
  REQUIRE(gw.dtype() == DType::Float32);
  w.zero_grad();
  b.zero_grad();
  sum(mul(linear(x32, w, b), Variable(c))).backward();
  REQUIRE(relative_error(x16.grad(), x32.grad()) < 3e-2);
  REQUIRE(relative_error(gw, w.grad()) < 3e-2);
  REQUIRE(relative_error(gb, b.grad()) < 3e-2);
}
