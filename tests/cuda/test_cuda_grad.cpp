// Autograd on CUDA Variables: each graph runs on CPU leaves and on CUDA copies
// of them, one random cotangent is backpropagated through both, and outputs
// and leaf gradients must agree (rtol 1e-5 for elementwise, reduction and
// softmax/loss graphs; looser where cuBLAS/cuDNN sum in their own order).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using V = std::vector<Variable>;
using VFn = std::function<Variable(const V&)>;

namespace {

const Device kCuda = Device::cuda();

void require_match(const Tensor& on_gpu, const Tensor& on_cpu, double rtol, double atol) {
  REQUIRE(on_gpu.device() == kCuda);
  const Tensor g = on_gpu.to(Device::cpu());
  REQUIRE(g.shape() == on_cpu.shape());
  REQUIRE(g.dtype() == on_cpu.dtype());
  const std::vector<double> a = to_vector<double>(g), b = to_vector<double>(on_cpu);
  // NaN matches NaN at the same position only; equal values (infinities too) match.
  auto close = [&](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y || std::abs(x - y) <= atol + rtol * std::abs(y);
  };
  size_t bad = 0;
  while (bad < a.size() && close(a[bad], b[bad])) ++bad;
  INFO("first mismatch at element " << bad << ": cuda " << (bad < a.size() ? a[bad] : 0.0) << ", cpu "
                                    << (bad < a.size() ? b[bad] : 0.0));
  REQUIRE(bad == a.size());
}

// Runs f on CPU leaves and on CUDA copies, backpropagates the same cotangent, compares.
void require_same_grads(const VFn& f, const std::vector<Tensor>& inputs, double rtol = 1e-5, double atol = 1e-6) {
  V on_cpu, on_gpu;
  for (const Tensor& t : inputs) {
    on_cpu.emplace_back(t, true);
    on_gpu.emplace_back(t.to(kCuda), true);
  }
  const Variable yc = f(on_cpu), yg = f(on_gpu);
  Generator gen(99);
  const Tensor cot = randn(yc.data().shape(), gen, yc.data().dtype());
  yc.backward(cot);
  yg.backward(cot.to(kCuda));
  {
    INFO("output");
    require_match(yg.data(), yc.data(), rtol, atol);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input " << i);
    require_match(on_gpu[i].grad(), on_cpu[i].grad(), rtol, atol);
  }
}

Tensor rnd(const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  return test::random_double(s, seed, lo, hi).to(DType::Float32);
}

}  // namespace

TEST_CASE("cuda gradients of elementwise graphs match the CPU", "[cuda][grad][elementwise]") {
  const Tensor a = rnd({6, 9}, 1), b = rnd({9}, 2), c = rnd({6, 1}, 3, 0.5, 2.0), p = rnd({9, 6}, 4, 0.2, 2.0);
  // Broadcasting, and a transposed (strided) operand inside the graph.
  require_same_grads([](const V& x) { return (x[0] + x[1]) * x[2] - x[0] / x[2]; }, {a, b, c});
  require_same_grads([](const V& x) { return maximum(x[0], x[1]) + minimum(x[0], x[2]); }, {a, b, c});
  require_same_grads([](const V& x) { return exp(x[0]) * log(x[1].t()) + sqrt(x[1].t()) - rsqrt(x[1]).t(); }, {a, p});
  require_same_grads([](const V& x) { return tanh(x[0]) + sigmoid(x[0]) * relu(x[0]) + abs(x[0]); }, {a});
  require_same_grads([](const V& x) { return pow(x[0], 3.0) + clamp(x[0], -0.3, 0.4) * 2.0 + (1.0 - x[0]); }, {a});
  require_same_grads([](const V& x) { return where(gt(x[0].data(), 0.0), x[0], x[1]); }, {a, b});
  // float64 graphs too.
  require_same_grads([](const V& x) { return x[0] * x[1] + exp(x[0]); },
                     {test::random_double({5, 7}, 5), test::random_double({7}, 6)});
}

TEST_CASE("cuda gradients of reductions match the CPU", "[cuda][grad][reduce]") {
  const Tensor x = rnd({4, 5, 6}, 7), img = rnd({8, 3, 10, 10}, 8);
  require_same_grads([](const V& v) { return sum(v[0]); }, {x});
  require_same_grads([](const V& v) { return sum(v[0], {1}) * mean(v[0], {1}); }, {x});
  require_same_grads([](const V& v) { return var(v[0], {1}) + mean(v[0].transpose(0, 2), {1}).t(); }, {x});
  require_same_grads([](const V& v) { return amax(v[0], {2}) - sum(amin(v[0], {0})); }, {x});
  require_same_grads([](const V& v) { return sum(v[0] * v[0], {0, 2, 3}); }, {img});     // sum_middle path
  require_same_grads([](const V& v) { return sum(v[0], {0}); }, {rnd({300, 4100}, 9)});  // long reductions
}

TEST_CASE("cuda gradients of softmax and the losses match the CPU", "[cuda][grad][softmax]") {
  const Tensor logits = rnd({16, 10}, 10, -3, 3), seg = rnd({2, 5, 4, 4}, 11, -3, 3);
  Generator gen(12);
  const Tensor target = randint(0, 10, {16}, gen), seg_target = randint(0, 5, {2, 4, 4}, gen);
  target.narrow(0, 2, 2).fill_(-100);
  seg_target.view({-1}).narrow(0, 5, 3).fill_(-100);
  require_same_grads([](const V& v) { return softmax(v[0], 1); }, {logits});
  require_same_grads([](const V& v) { return log_softmax(v[0], 0); }, {logits});
  require_same_grads([](const V& v) { return softmax(v[0], 1) * log_softmax(v[0].t(), 0).t(); }, {rnd({6, 300}, 13)});
  for (double eps : {0.0, 0.1})
    for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
      INFO("label_smoothing " << eps << " reduction " << static_cast<int>(r));
      const CrossEntropyOptions o{r, -100, eps};
      const Tensor t = target, st = seg_target;
      require_same_grads([&](const V& v) { return cross_entropy(v[0], t.to(v[0].data().device()), o); }, {logits});
      require_same_grads([&](const V& v) { return cross_entropy(v[0], st.to(v[0].data().device()), o); }, {seg});
      require_same_grads([&](const V& v) { return nll_loss(log_softmax(v[0], 1), t.to(v[0].data().device()), r); },
                         {logits});
    }
  require_same_grads([](const V& v) { return mse_loss(v[0], v[1]); }, {rnd({5, 3}, 14), rnd({5, 3}, 15)});
}

TEST_CASE("cuda gradients through matmul, conv, batch norm and pooling match the CPU", "[cuda][grad][dnn]") {
  // fp32 without TF32 (the default): cuBLAS and cuDNN only sum in another order.
  const double rtol = 1e-4, atol = 1e-4;
  const Tensor x = rnd({5, 12}, 16), w = rnd({7, 12}, 17), bias = rnd({7}, 18);
  require_same_grads([](const V& v) { return linear(v[0], v[1], v[2]); }, {x, w, bias}, rtol, atol);
  require_same_grads([](const V& v) { return matmul(v[0], v[1].t()); }, {x, w}, rtol, atol);
  const Tensor img = rnd({4, 3, 9, 9}, 19), k = rnd({6, 3, 3, 3}, 20), kb = rnd({6}, 21);
  Conv2dParams cp;
  cp.padding = {1, 1};
  cp.stride = {2, 2};
  require_same_grads([cp](const V& v) { return relu(conv2d(v[0], v[1], v[2], cp)); }, {img, k, kb}, rtol, atol);
  const Tensor gamma = rnd({3}, 22, 0.5, 1.5), beta = rnd({3}, 23);
  require_same_grads(
      [](const V& v) {
        return batch_norm(v[0], v[1], v[2], zeros({3}, {DType::Float32, v[0].data().device()}),
                          ones({3}, {DType::Float32, v[0].data().device()}), true);
      },
      {img, gamma, beta}, rtol, atol);
  require_same_grads([](const V& v) { return max_pool2d(v[0], 2) + avg_pool2d(v[0], 2); }, {img}, rtol, atol);
  // A small CNN step end to end: conv → BN → ReLU → pool → linear → cross_entropy.
  Generator gen(24);
  const Tensor target = randint(0, 5, {4}, gen), fc = rnd({5, 6 * 2 * 2}, 25);
  require_same_grads(
      [&](const V& v) {
        const Device d = v[0].data().device();
        const Variable h = max_pool2d(
            relu(batch_norm(conv2d(v[0], v[1], v[2], cp), Variable(), Variable(), Tensor(), Tensor(), true)), 2);
        return cross_entropy(linear(h.flatten(1), v[3], Variable()), target.to(d));
      },
      {img, k, kb, fc}, rtol, atol);
}

TEST_CASE("Variable::to moves across devices with its gradient", "[cuda][grad][to]") {
  // CPU leaf → CUDA computation → CPU loss: each gradient returns to its leaf's device.
  const Tensor a = rnd({3, 4}, 26), b = rnd({3, 4}, 27);
  Variable x(a, true), y(b.to(kCuda), true);
  const Variable on_gpu = x.to(kCuda) * y;
  REQUIRE(on_gpu.device() == kCuda);
  const Variable loss = (on_gpu.to(Device::cpu()) * 2.0).sum();
  REQUIRE(loss.device() == Device::cpu());
  loss.backward();
  REQUIRE(x.grad().device() == Device::cpu());
  REQUIRE(y.grad().device() == kCuda);
  // d loss / dx = 2 y, d loss / dy = 2 x, exactly (one multiply by 2 of a copied value).
  REQUIRE(to_vector<float>(x.grad()) == to_vector<float>(mul(b, 2.0)));
  REQUIRE(to_vector<float>(y.grad().to(Device::cpu())) == to_vector<float>(mul(a, 2.0)));
  // The same device is the identity, as in PyTorch: no copy, no extra node.
  REQUIRE(y.to(kCuda).data().raw_data() == y.data().raw_data());
}
