// Whole-model training on CUDA against the CPU: VGG-11-BN and ResNet-18 (CIFAR, 32x32, batch 4,
// 10 classes) take two SGD steps (momentum 0.9, weight decay 5e-4) on one batch, in float32 and
// under bf16 autocast; after each step the loss, every parameter and BatchNorm buffer must match,
// then eval-mode logits. The ops alone are checked in test_cuda_dnn, _layers and _half; this
// checks them composed, with SGD's state and BatchNorm's running statistics.
// Runs only with a GPU (tests/cuda/cuda_main.cpp exits 77 otherwise).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();

// Note [Model tolerances]
// The devices round differently (cuBLAS/cuDNN sum in other orders than the CPU kernels), and
// BatchNorm over 4 images amplifies it in the deep layers. So each state tensor (parameter or
// running statistic) is compared in 2-norm: |cuda - cpu| <= update * |the cpu's change over the
// steps| + value * |cpu|. A wrong gradient or SGD rule is a fraction of the change (a 10% larger
// lr: 0.1; no momentum in step 2: 0.47; no weight decay: up to 1). The bounds were measured on the
// CPU alone, against a copy fed an input scaled by 1 + 1e-4 or given gradients with 1e-3 relative
// noise (float32 rounding is 6e-8), and leave a margin of 2 (bf16) to 5 (float32) or more:
// - float32: state tensors moved by <= 1e-2 of their change, losses by 1.5e-4, logits by 1.1e-4.
// - bf16: conv and linear outputs and gradients round to 8 bits, and with 4 images the early
//   layers' gradients carry that noise at up to 0.49 of the change (0.47 against float32), so
//   update = 1 catches only gross errors (a reversed step, a NaN); the float32 cases catch the
//   rest. VGG's conv biases feed a BatchNorm, which cancels them: their exact gradient is zero
//   and their change is weight decay plus rounding noise, up to 33x the change but 4.2e-4 of their
//   norm (value = 1e-3). The loss after a step inherits that noise (up to 7% of VGG's, which the
//   first step takes from 2.8 to 0.25), so the bf16 loss is compared relative to the first loss.
struct Tolerance {
  double loss, update, value, logits;  // logits: relative to max |cpu logits|
};
constexpr Tolerance kFloat32{1e-3, 5e-2, 1e-6, 1e-3};
constexpr Tolerance kBFloat16{2e-2, 1.0, 1e-3, 5e-2};

struct Replica {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::SGD> opt;
};

// Both replicas are built from the same seed (the weights are drawn on the CPU), then moved.
Replica make_replica(const std::string& name, Device device) {
  manual_seed(5);
  Replica r{nn::make_model(name, 10, 3, 32), nullptr};
  r.model->to(device);
  r.opt = std::make_unique<optim::SGD>(r.model->parameters(),
                                       optim::SGDOptions{.lr = 0.01, .momentum = 0.9, .weight_decay = 5e-4});
  return r;
}

// One training step on x's device; returns the loss. Parameters and gradients stay float32.
double train_step(Replica& r, const Tensor& x, const Tensor& y, bool bf16) {
  r.opt->zero_grad();
  Variable loss;
  {
    autocast::Guard guard(DType::BFloat16, bf16);
    loss = cross_entropy(r.model->forward(Variable(x)), y);
  }
  REQUIRE(loss.dtype() == DType::Float32);
  loss.backward();
  for (const auto& [name, p] : r.model->named_parameters()) {
    INFO(name);
    REQUIRE(p.dtype() == DType::Float32);
    REQUIRE(p.device() == x.device());
    REQUIRE(p.grad().dtype() == DType::Float32);
    REQUIRE(p.grad().device() == x.device());
  }
  r.opt->step();
  return loss.data().item();
}

std::vector<double> values(const Tensor& t) { return to_vector<double>(t.to(Device::cpu()).to(DType::Float64)); }

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}

// The CPU's state before the first step: what its changes are measured from.
std::vector<std::vector<double>> snapshot(const nn::Module& m) {
  std::vector<std::vector<double>> out;
  for (const auto& [name, v] : m.named_state()) out.push_back(values(v.data()));
  return out;
}

// Every parameter and buffer of the CUDA replica against the CPU's. See Note [Model tolerances].
void require_same_state(const nn::Module& gpu, const nn::Module& cpu, const std::vector<std::vector<double>>& start,
                        const Tolerance& tol, int steps) {
  const auto g = gpu.named_state(), c = cpu.named_state();
  REQUIRE(g.size() == c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const std::string& name = c[i].first;
    INFO(name << " after step " << steps);
    REQUIRE(g[i].first == name);
    REQUIRE(g[i].second.device() == kCuda);
    REQUIRE(g[i].second.dtype() == c[i].second.dtype());
    const std::vector<double> a = values(g[i].second.data()), b = values(c[i].second.data());
    REQUIRE(a.size() == b.size());
    if (c[i].second.dtype() == DType::Int64) {  // num_batches_tracked
      REQUIRE(a == b);
      REQUIRE(b[0] == steps);
      continue;
    }
    const std::vector<double> zero(b.size(), 0.0);
    const double d = distance(a, b), moved = distance(b, start[i]), size = distance(b, zero);
    INFO("|cuda - cpu| " << d << ", the cpu's change " << moved << ", |cpu| " << size);
    REQUIRE(moved > 0);
    REQUIRE(d <= tol.update * moved + tol.value * size);
  }
}

void check_training(const std::string& name, bool bf16) {
  cuda::set_allow_tf32(false);  // the default: IEEE float32 GEMMs and convolutions, as on the CPU
  const Tolerance& tol = bf16 ? kBFloat16 : kFloat32;
  Generator gen(11);
  const Tensor x = randn({4, 3, 32, 32}, gen), y = randint(0, 10, {4}, gen);
  const Tensor xg = x.to(kCuda), yg = y.to(kCuda);
  Replica cpu = make_replica(name, Device::cpu()), gpu = make_replica(name, kCuda);
  const auto start = snapshot(*cpu.model);
  for (size_t i = 0; i < start.size(); ++i) REQUIRE(start[i] == values(gpu.model->named_state()[i].second.data()));
  double first = 0;
  for (int step = 1; step <= 2; ++step) {
    const double lc = train_step(cpu, x, y, bf16), lg = train_step(gpu, xg, yg, bf16);
    if (step == 1) first = lc;
    INFO("step " << step << ": loss cuda " << lg << ", cpu " << lc);
    // bf16: relative to the first loss, see Note [Model tolerances].
    REQUIRE(std::abs(lg - lc) <= tol.loss * (bf16 ? first : std::abs(lc)));
    require_same_state(*gpu.model, *cpu.model, start, tol, step);
  }
  // Eval mode: BatchNorm normalizes with the running statistics compared above.
  cpu.model->eval();
  gpu.model->eval();
  NoGradGuard no_grad;
  autocast::Guard guard(DType::BFloat16, bf16);
  const std::vector<double> lc = values(cpu.model->forward(Variable(x)).data()),
                            lg = values(gpu.model->forward(Variable(xg)).data());
  REQUIRE(lg.size() == lc.size());
  double scale = 0, worst = 0;
  for (size_t i = 0; i < lc.size(); ++i) scale = std::max(scale, std::abs(lc[i]));
  for (size_t i = 0; i < lc.size(); ++i) worst = std::max(worst, std::abs(lg[i] - lc[i]));
  INFO("eval logits: max |cuda - cpu| " << worst << ", max |cpu| " << scale);
  REQUIRE(scale > 0);
  REQUIRE(worst <= tol.logits * scale);
}

}  // namespace

TEST_CASE("cuda VGG-11-BN trains like the CPU in float32", "[cuda][models]") { check_training("vgg11_bn", false); }

TEST_CASE("cuda VGG-11-BN trains like the CPU under bf16 autocast", "[cuda][models][autocast]") {
  check_training("vgg11_bn", true);
}

TEST_CASE("cuda ResNet-18 trains like the CPU in float32", "[cuda][models]") { check_training("resnet18", false); }

TEST_CASE("cuda ResNet-18 trains like the CPU under bf16 autocast", "[cuda][models][autocast]") {
  check_training("resnet18", true);
}
