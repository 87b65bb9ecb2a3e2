// Layers and losses on CUDA Variables (docs/nn.md): conv_transpose2d and
// conv1d (cuDNN's conv kernels), the elementwise losses and weighted
// cross_entropy (tensor-op compositions) must match the CPU, forward and
// gradients (adaptive pooling and interpolate: test_cuda_resample.cpp).
// Runs only with a GPU (tests/cuda/cuda_main.cpp exits 77 otherwise).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/nn/layers.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using V = std::vector<Variable>;
using VFn = std::function<Variable(const V&)>;

namespace {

const Device kCuda = Device::cuda();

void require_match(const Tensor& on_gpu, const Tensor& on_cpu, double rtol, double atol) {
  REQUIRE(on_gpu.device() == kCuda);
  const std::vector<double> a = to_vector<double>(on_gpu.to(Device::cpu())), b = to_vector<double>(on_cpu);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": cuda " << a[i] << ", cpu " << b[i]);
    REQUIRE(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i]));
  }
}

// f on CPU leaves and on CUDA copies; one cotangent backpropagated through both.
void require_same(const VFn& f, const std::vector<Tensor>& inputs, double rtol, double atol) {
  V on_cpu, on_gpu;
  for (const Tensor& t : inputs) {
    on_cpu.emplace_back(t, true);
    on_gpu.emplace_back(t.to(kCuda), true);
  }
  const Variable yc = f(on_cpu), yg = f(on_gpu);
  const Tensor cot = test::random_double(yc.shape(), 99).to(yc.dtype());
  yc.backward(cot);
  yg.backward(cot.to(kCuda));
  require_match(yg.data(), yc.data(), rtol, atol);
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input " << i);
    require_match(on_gpu[i].grad(), on_cpu[i].grad(), rtol, atol);
  }
}

Conv2dParams params(std::array<int64_t, 2> stride, std::array<int64_t, 2> pad, std::array<int64_t, 2> dil,
                    int64_t groups = 1) {
  Conv2dParams p;
  p.stride = stride, p.padding = pad, p.dilation = dil, p.groups = groups;
  return p;
}

}  // namespace

TEST_CASE("cuda conv_transpose2d and conv1d match the CPU", "[cuda][layers]") {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double rtol = dt == DType::Float64 ? 1e-9 : 1e-4;
    auto rnd = [dt](const Shape& s, uint64_t seed) { return test::random_double(s, seed).to(dt); };
    require_same(
        [](const V& v) {
          return conv_transpose2d(v[0], v[1], v[2], params({2, 1}, {1, 0}, {1, 2}), {1, 0});
        },
        {rnd({2, 4, 5, 6}, 1), rnd({4, 3, 3, 2}, 2), rnd({3}, 3)}, rtol, rtol);
    require_same(
        [](const V& v) {
          return conv_transpose2d(v[0], v[1], v[2], params({2, 3}, {1, 1}, {3, 1}, 2), {2, 2});
        },
        {rnd({1, 4, 4, 3}, 4), rnd({4, 2, 3, 3}, 5), rnd({4}, 6)}, rtol, rtol);
    require_same([](const V& v) { return conv1d(v[0], v[1], v[2], 2, 2, 2, 2); },
                 {rnd({2, 4, 13}, 7), rnd({6, 2, 3}, 8), rnd({6}, 9)}, rtol, rtol);
  }
}

TEST_CASE("cuda losses match the CPU", "[cuda][loss]") {
  const Tensor a = test::random_double({4, 5}, 11), b = test::random_double({4, 5}, 12);
  const Tensor p = test::random_double({4, 5}, 13, 0.05, 0.95), t = test::random_double({4, 5}, 14, 0, 1);
  const Tensor w = test::random_double({5}, 15, 0.2, 2.0);
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    require_same([r](const V& v) { return l1_loss(v[0], v[1], r); }, {a, b}, 1e-12, 1e-12);
    require_same([r](const V& v) { return smooth_l1_loss(v[0], v[1], r, 0.3); }, {a, b}, 1e-12, 1e-12);
    require_same([r](const V& v) { return huber_loss(v[0], v[1], r, 0.3); }, {a, b}, 1e-12, 1e-12);
    require_same([r](const V& v) { return binary_cross_entropy(v[0], v[1], Tensor(), r); }, {p, t}, 1e-12, 1e-12);
    require_same(
        [r, w](const V& v) { return binary_cross_entropy_with_logits(v[0], v[1], Tensor(), w.to(v[0].device()), r); },
        {a, t}, 1e-12, 1e-12);
    require_same([r](const V& v) { return kl_div(log(v[0]), v[1], KLDivReduction::BatchMean); }, {p, t}, 1e-12, 1e-12);
    const Tensor target = from_vector<int64_t>({1, 4, -1, 0}, {4});
    const CrossEntropyOptions opts{r, -1, 0.1};
    require_same([&](const V& v) { return cross_entropy(v[0], target.to(v[0].device()), w.to(v[0].device()), opts); },
                 {a}, 1e-12, 1e-12);
  }
}

TEST_CASE("cuda AdaptiveAvgPool2d's 1x1 path (a mean) matches the CPU", "[cuda][layers]") {
  const Variable x(test::random_double({1, 2, 5, 7}, 21).to(kCuda));
  require_match(nn::AdaptiveAvgPool2d(1)(x).data(),
                nn::AdaptiveAvgPool2d(1)(Variable(x.data().to(Device::cpu()))).data(), 1e-12, 1e-12);
}
