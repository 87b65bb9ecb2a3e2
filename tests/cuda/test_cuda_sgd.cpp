// sgd_update_ and optim::SGD on CUDA against the CPU: the fused kernel (one launch
// per parameter, no temporaries) over the hyper-parameter matrix and three steps in
// all four float dtypes, the composite fallback for strided or mixed-dtype operands,
// and SGD's weights and momentum buffers. Skipped (exit 77) without a GPU.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <vector>

#include "tests/common/gradcheck.h"
#include "tests/common/optim_steps.h"
#include <ddl/ddl.h>
#include <ddl/tensor/core/devices.h>

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();

// A copy on `d` that never aliases t (to() onto t's own device returns t itself).
Tensor copy_to(const Tensor& t, Device d) { return d == t.device() ? t.clone() : t.to(d); }

// Note [Fused SGD tolerance]
// float32/float64: the kernel's a * b + c may be one FMA (Note [Fused SGD arithmetic]
// in tensor/cuda/sgd_update.cu), a rounding the CPU may skip or not, so results differ
// by about one ulp of the O(1) terms per step: |diff| <= 1e-6 (1 + |cpu|) in float32
// leaves a margin of ~7 over a host emulation of both (1.4e-7 at most over 3 steps).
// 16-bit: the CPU rounds d, buf * m, the sum and w to 16 bits every step, the kernel
// only buf and w; the same emulation found at most 2.7 unit roundoffs
// (u = 2^-8 bfloat16, 2^-11 float16) times (1 + |cpu|) after 3 steps; allowed: 4.
double tolerance(DType dt) {
  switch (dt) {
    case DType::Float64:
      return 1e-14;
    case DType::Float16:
      return 4 * std::ldexp(1.0, -11);
    case DType::BFloat16:
      return 4 * std::ldexp(1.0, -8);
    default:
      return 1e-6;
  }
}

void require_match(const Tensor& on_gpu, const Tensor& on_cpu, double tol) {
  REQUIRE(on_gpu.device() == kCuda);
  REQUIRE(on_gpu.dtype() == on_cpu.dtype());
  REQUIRE(on_gpu.shape() == on_cpu.shape());
  const std::vector<double> a = to_vector<double>(copy_to(on_gpu, Device::cpu())), b = to_vector<double>(on_cpu);
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": cuda " << a[i] << ", cpu " << b[i]);
    REQUIRE(std::abs(a[i] - b[i]) <= tol * (1 + std::abs(b[i])));
  }
}

// Three steps from the same values on the CPU and on CUDA; strided: w is a transposed
// view on both (the composite fallback on CUDA).
void require_same_steps(DType dt, const SgdUpdate& o, const Shape& shape, bool strided) {
  INFO(dt << " " << shape << (strided ? " strided" : "") << " momentum " << o.momentum << " dampening " << o.dampening
          << " nesterov " << o.nesterov << " weight_decay " << o.weight_decay);
  Tensor w_cpu = test::random_double(shape, 1).to(dt), w_gpu = copy_to(w_cpu, kCuda);
  if (strided) {
    w_cpu = test::non_contiguous(w_cpu);
    w_gpu = test::non_contiguous(w_gpu);
  }
  REQUIRE(w_gpu.is_contiguous() == !strided);
  Tensor buf_cpu, buf_gpu;
  for (int step = 0; step < 3; ++step) {
    const Tensor g = test::random_double(shape, 10 + step).to(dt);
    sgd_update_(w_cpu, g, buf_cpu, o);
    sgd_update_(w_gpu, copy_to(g, kCuda), buf_gpu, o);
    require_match(w_gpu, w_cpu, tolerance(dt));
    REQUIRE(buf_gpu.defined() == buf_cpu.defined());
    if (buf_gpu.defined()) require_match(buf_gpu, buf_cpu, tolerance(dt));
  }
}

}  // namespace

// First, so that no earlier test case has raised the allocator's peak.
TEST_CASE("a fused SGD step on CUDA allocates no parameter-sized temporary", "[cuda][optim][sgd]") {
  // The composite would allocate add(g, w, wd) and add(d, buf, m), each as large as w.
  const SgdUpdate o{.lr = 0.1, .momentum = 0.9, .weight_decay = 5e-4, .nesterov = true};
  const int64_t n = int64_t{1} << 24;
  const int64_t bytes = n * 4;
  const TensorOptions f32{DType::Float32, kCuda};
  Tensor w = full({n}, 1.0, f32), buf;
  sgd_update_(w, full({n}, 0.5, f32), buf, o);
  const Tensor g = full({n}, 0.25, f32);
  cuda::synchronize(0);
  const MemoryStats before = cuda::memory_stats(0);
  // Premise: a parameter-sized temporary now would set a new peak (w, g, buf are all there is).
  REQUIRE(before.peak_allocated_bytes < before.allocated_bytes + bytes);
  sgd_update_(w, g, buf, o);
  cuda::synchronize(0);
  CHECK(cuda::memory_stats(0).peak_allocated_bytes < before.allocated_bytes + bytes);
  // 1 - 0.1 * (d + 0.9 * b) with d = g + 5e-4 w, b = 0.9 d1 + d (d1 the first step's d).
  const double w1 = 1 - 0.1 * (0.5005 + 0.9 * 0.5005);
  const double d = 0.25 + 5e-4 * w1, b = 0.9 * 0.5005 + d;
  CHECK(to_vector<double>(w.slice(0, 0, 1).to(Device::cpu()))[0] == Approx(w1 - 0.1 * (d + 0.9 * b)).epsilon(1e-6));
}

TEST_CASE("sgd_update_ on CUDA matches the CPU over three steps", "[cuda][optim][sgd]") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
    for (const SgdUpdate& o : test::sgd_option_matrix()) {
      require_same_steps(dt, o, {257, 33}, false);
      require_same_steps(dt, o, {0, 3}, false);
    }
}

TEST_CASE("sgd_update_ on CUDA takes the composite for strided or mixed operands", "[cuda][optim][sgd]") {
  for (DType dt : {DType::Float32, DType::BFloat16})
    for (const SgdUpdate& o : test::sgd_option_matrix()) require_same_steps(dt, o, {33, 17}, true);
  // A float32 parameter with a float64 gradient: the buffer is float64 on both devices.
  const SgdUpdate o{.lr = 0.1, .momentum = 0.9, .weight_decay = 5e-4};
  Tensor w_cpu = test::random_double({5, 4}, 3).to(DType::Float32), w_gpu = copy_to(w_cpu, kCuda);
  Tensor buf_cpu, buf_gpu;
  for (int step = 0; step < 3; ++step) {
    const Tensor g = test::random_double({5, 4}, 30 + step);
    sgd_update_(w_cpu, g, buf_cpu, o);
    sgd_update_(w_gpu, copy_to(g, kCuda), buf_gpu, o);
    require_match(w_gpu, w_cpu, 1e-6);
    require_match(buf_gpu, buf_cpu, 1e-14);
  }
}

TEST_CASE("optim::SGD on CUDA matches the CPU, momentum buffers included", "[cuda][optim][sgd]") {
  const auto opts = optim::SGDOptions(0.05).momentum(0.9).weight_decay(5e-4).nesterov(true);
  std::vector<Variable> cpu_params, gpu_params;
  for (const Shape& s : {Shape{16, 8}, Shape{8}}) {
    const Tensor t = test::random_double(s, 4 + s.numel()).to(DType::Float32);
    cpu_params.emplace_back(t.clone(), true);
    gpu_params.emplace_back(copy_to(t, kCuda), true);
  }
  optim::SGD on_cpu(cpu_params, opts), on_gpu(gpu_params, opts);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < cpu_params.size(); ++i) {
      const Tensor g = test::random_double(cpu_params[i].shape(), 40 + 2 * step + i).to(DType::Float32);
      cpu_params[i].set_grad(g.clone());
      gpu_params[i].set_grad(copy_to(g, kCuda));
    }
    on_cpu.step();
    on_gpu.step();
    for (size_t i = 0; i < cpu_params.size(); ++i) require_match(gpu_params[i].data(), cpu_params[i].data(), 1e-6);
  }
  std::map<std::string, Tensor> cpu_state, gpu_state;
  for (const auto& [name, t] : on_cpu.state_tensors()) cpu_state[name] = t;
  for (const auto& [name, t] : on_gpu.state_tensors()) gpu_state[name] = t;
  REQUIRE(gpu_state.size() == cpu_state.size());
  for (const char* name : {"state.0.momentum_buffer", "state.1.momentum_buffer"}) {
    INFO(name);
    REQUIRE(gpu_state.count(name) == 1);
    require_match(gpu_state[name], cpu_state[name], 1e-6);
  }
}

TEST_CASE("sgd_update_ on CUDA: a non-default stream, and operands sharing storage", "[cuda][optim][sgd]") {
  // The fused kernel and its first-step buffer go on the current stream.
  const SgdUpdate o{.lr = 0.1, .momentum = 0.9, .weight_decay = 5e-4};
  const cuda::Stream side = cuda::Stream::create(0);
  Tensor w_cpu = test::random_double({300, 7}, 60).to(DType::Float32), buf_cpu, buf_gpu, w_gpu;
  {
    cuda::StreamGuard guard(side);
    w_gpu = copy_to(w_cpu, kCuda);
    for (int step = 0; step < 3; ++step) {
      const Tensor g = test::random_double({300, 7}, 61 + step).to(DType::Float32);
      sgd_update_(w_cpu, g, buf_cpu, o);
      sgd_update_(w_gpu, copy_to(g, kCuda), buf_gpu, o);
    }
  }
  side.synchronize();
  require_match(w_gpu, w_cpu, 1e-6);
  require_match(buf_gpu, buf_cpu, 1e-6);

  // grad overlaps w one element further on: the composite (which copies the operand
  // first) on both devices, never the fused kernel, which would race.
  const Tensor flat = test::random_double({1001}, 62).to(DType::Float32);
  Tensor flat_gpu = copy_to(flat, kCuda), none_cpu, none_gpu;
  Tensor flat_cpu = flat.clone();
  const SgdUpdate plain{.lr = 0.5};
  sgd_update_(flat_cpu.slice(0, 0, 1000), flat_cpu.slice(0, 1, 1001), none_cpu, plain);
  sgd_update_(flat_gpu.slice(0, 0, 1000), flat_gpu.slice(0, 1, 1001), none_gpu, plain);
  require_match(flat_gpu, flat_cpu, 1e-6);
}

TEST_CASE("optimizer state saved on the CPU loads into a CUDA model's optimizer", "[cuda][optim][sgd]") {
  const auto opts = optim::SGDOptions(0.05).momentum(0.9);
  const Tensor t = test::random_double({6, 5}, 70).to(DType::Float32);
  Variable p_cpu(t.clone(), true), p_gpu(copy_to(t, kCuda), true);
  optim::SGD on_cpu({p_cpu}, opts), on_gpu({p_gpu}, opts);
  p_cpu.set_grad(test::random_double({6, 5}, 71).to(DType::Float32));
  on_cpu.step();
  on_gpu.load_state(on_cpu.state_tensors(), on_cpu.state_metadata());
  for (const auto& [name, v] : on_gpu.state_tensors()) {
    INFO(name);
    REQUIRE(v.device() == kCuda);
  }
  p_gpu.set_data(copy_to(p_cpu.data(), kCuda));
  const Tensor g = test::random_double({6, 5}, 72).to(DType::Float32);
  p_cpu.set_grad(g.clone());
  p_gpu.set_grad(copy_to(g, kCuda));
  on_cpu.step();
  on_gpu.step();  // refused before: the loaded momentum buffer stayed on the CPU
  require_match(p_gpu.data(), p_cpu.data(), 1e-6);
}
