// CUDA GEMM, conv2d, batch_norm and pooling kernels against the CPU backend on
// the same random inputs: VGG-like and odd shapes, strides, padding, dilation,
// groups, batch 1, float32 (TF32 off and on) and float64, forward and backward;
// plus the cuDNN algorithm cache (a repeated shape does not search again, both
// of its paths match the CPU, a search keeps the allocator's cache), cuBLAS's
// workspace per stream, work on a non-default stream, GEMM on padded-leading-
// dimension views, C = 0, and 16-bit batch_norm parameters against the CPU.
// Runs only with a GPU (tests/cuda/cuda_main.cpp exits 77 otherwise).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <ddl/ddl_config.h>
#include <ddl/tensor/ops.h>
#if DDL_HAVE_CUDA  // the counter lives in the CUDA backend; a CPU-only build has none to link
#include <ddl/tensor/cuda/dnn.h>
#endif

using namespace ddl;

namespace {

Tensor random(const Shape& s, uint64_t seed, DType dt = DType::Float32) {
  Generator gen(seed);
  return randn(s, gen).to(dt);
}

Tensor to_gpu(const Tensor& t) { return t.defined() ? t.to(Device::cuda()) : Tensor(); }
Tensor to_cpu(const Tensor& t) { return t.to(Device::cpu()); }

// Every element within rtol of the reference, relative to the reference's
// largest magnitude (sums with cancellation have small entries with large
// absolute error).
void require_close(const Tensor& got_gpu, const Tensor& want, double rtol, const char* what) {
  INFO(what << ": " << got_gpu.shape() << " " << got_gpu.dtype());
  REQUIRE(got_gpu.device() == Device::cuda());
  REQUIRE(got_gpu.shape() == want.shape());
  const std::vector<double> a = to_vector<double>(to_cpu(got_gpu)), b = to_vector<double>(want);
  double scale = 0, err = 0;
  for (double v : b) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < a.size(); ++i) err = std::max(err, std::abs(a[i] - b[i]));
  INFO("max |gpu - cpu| = " << err << ", max |cpu| = " << scale);
  REQUIRE(err <= rtol * std::max(scale, 1e-12));
}

void require_equal(const Tensor& got_gpu, const Tensor& want, const char* what) {
  INFO(what << ": " << got_gpu.shape());
  REQUIRE(got_gpu.shape() == want.shape());
  REQUIRE(to_vector<double>(to_cpu(got_gpu)) == to_vector<double>(want));
}

// TF32 on for its lifetime; always restored, even when a REQUIRE throws.
struct Tf32On {
  Tf32On() { cuda::set_allow_tf32(true); }
  ~Tf32On() { cuda::set_allow_tf32(false); }
};

double tol(DType dt) { return dt == DType::Float64 ? 1e-10 : 1e-4; }

}  // namespace

TEST_CASE("cuda matmul matches the CPU: plain, transposed, batched, broadcast, odd sizes", "[cuda][gemm]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {7, 13, 5}, {64, 576, 128}, {33, 1, 65}}) {
      const Tensor a = random({m, k}, 1, dt), b = random({k, n}, 2, dt);
      require_close(matmul(to_gpu(a), to_gpu(b)), matmul(a, b), tol(dt), "A B");
      const Tensor at = random({k, m}, 3, dt), bt = random({n, k}, 4, dt);  // transposed views, read in place
      require_close(matmul(to_gpu(at).t(), to_gpu(bt).t()), matmul(at.t(), bt.t()), tol(dt), "A^T B^T");
      require_close(matmul(to_gpu(a), to_gpu(bt).t()), matmul(a, bt.t()), tol(dt), "A B^T");
    }
    const Tensor a = random({4, 9, 17}, 5, dt), b = random({4, 17, 6}, 6, dt), w = random({17, 6}, 7, dt);
    require_close(matmul(to_gpu(a), to_gpu(b)), matmul(a, b), tol(dt), "batched");
    require_close(matmul(to_gpu(a), to_gpu(w)), matmul(a, w), tol(dt), "broadcast B");
    const Tensor v = random({17}, 8, dt);
    require_close(matmul(to_gpu(a), to_gpu(v)), matmul(a, v), tol(dt), "matrix-vector");
    const Tensor x = random({5, 17}, 9, dt), lw = random({11, 17}, 10, dt), lb = random({11}, 11, dt);
    require_close(linear(to_gpu(x), to_gpu(lw), to_gpu(lb)), linear(x, lw, lb), tol(dt), "linear");
  }
}

TEST_CASE("cuda matmul with TF32 stays close to the CPU", "[cuda][gemm][tf32]") {
  const Tensor a = random({128, 512}, 12), b = random({512, 96}, 13);
  const Tensor want = matmul(a, b);
  Tf32On on;
  require_close(matmul(to_gpu(a), to_gpu(b)), want, 5e-3, "TF32 GEMM");
}

namespace {

struct ConvCase {
  Shape x, w;
  Conv2dParams p;
  bool bias;
};

Conv2dParams conv_params(std::array<int64_t, 2> stride, std::array<int64_t, 2> pad, std::array<int64_t, 2> dil = {1, 1},
                         int64_t groups = 1) {
  Conv2dParams p;
  p.stride = stride, p.padding = pad, p.dilation = dil, p.groups = groups;
  return p;
}

std::vector<ConvCase> conv_cases() {
  return {
      {{4, 3, 32, 32}, {64, 3, 3, 3}, conv_params({1, 1}, {1, 1}), true},            // VGG's first layer
      {{8, 64, 16, 16}, {128, 64, 3, 3}, conv_params({1, 1}, {1, 1}), true},         // a VGG middle layer
      {{2, 256, 2, 2}, {256, 256, 3, 3}, conv_params({1, 1}, {1, 1}), false},        // a late 2x2 map
      {{1, 16, 8, 8}, {32, 16, 1, 1}, conv_params({1, 1}, {0, 0}), true},            // 1x1, batch 1
      {{3, 5, 11, 13}, {7, 5, 3, 5}, conv_params({2, 3}, {1, 2}), true},             // odd sizes, strides, padding
      {{2, 4, 15, 9}, {6, 4, 3, 3}, conv_params({1, 2}, {2, 1}, {2, 3}), false},     // dilation
      {{2, 6, 10, 10}, {9, 2, 3, 3}, conv_params({1, 1}, {1, 1}, {1, 1}, 3), true},  // groups
  };
}

void check_conv(const ConvCase& c, DType dt, double rtol, uint64_t seed) {
  INFO("x " << c.x << " w " << c.w << " stride " << c.p.stride[0] << "," << c.p.stride[1] << " groups " << c.p.groups);
  const Tensor x = random(c.x, seed, dt), w = random(c.w, seed + 1, dt);
  const Tensor b = c.bias ? random({c.w[0]}, seed + 2, dt) : Tensor();
  const Tensor y = conv2d(x, w, b, c.p);
  require_close(conv2d(to_gpu(x), to_gpu(w), to_gpu(b), c.p), y, rtol, "conv2d forward");
  const Tensor gy = random(y.shape(), seed + 3, dt);
  require_close(conv2d_backward_input(to_gpu(gy), to_gpu(w), x.shape(), c.p),
                conv2d_backward_input(gy, w, x.shape(), c.p), rtol, "conv2d backward input");
  require_close(conv2d_backward_weight(to_gpu(gy), to_gpu(x), w.shape(), c.p),
                conv2d_backward_weight(gy, x, w.shape(), c.p), rtol, "conv2d backward weight");
}

}  // namespace

TEST_CASE("cuda conv2d matches the CPU forward and backward", "[cuda][conv]") {
  uint64_t seed = 100;
  for (const ConvCase& c : conv_cases()) check_conv(c, DType::Float32, 1e-4, seed += 10);
  for (const ConvCase& c : conv_cases()) check_conv(c, DType::Float64, 1e-10, seed += 10);
}

TEST_CASE("cuda conv2d with TF32 stays close to the CPU", "[cuda][conv][tf32]") {
  Tf32On on;
  check_conv({{8, 64, 16, 16}, {128, 64, 3, 3}, conv_params({1, 1}, {1, 1}), true}, DType::Float32, 5e-3, 7);
}

TEST_CASE("cuda conv2d unbatched input goes through the same kernels", "[cuda][conv]") {
  const Tensor x = random({3, 9, 9}, 1), w = random({4, 3, 3, 3}, 2);
  require_close(conv2d(to_gpu(x), to_gpu(w), Tensor(), conv_params({2, 2}, {1, 1})),
                conv2d(x, w, Tensor(), conv_params({2, 2}, {1, 1})), 1e-4, "unbatched conv2d");
}

#if DDL_HAVE_CUDA
TEST_CASE("cuda conv2d chooses an algorithm once per shape", "[cuda][conv][cache]") {
  using cuda::detail::conv_algo_searches;
  // A shape no other test uses, so its first call must search.
  const Tensor x = to_gpu(random({3, 7, 19, 23}, 1)), w = to_gpu(random({5, 7, 3, 3}, 2));
  const Conv2dParams p = conv_params({1, 1}, {1, 1});
  const int64_t before = conv_algo_searches();
  const Tensor y1 = conv2d(x, w, Tensor(), p);
  REQUIRE(conv_algo_searches() == before + 1);
  const Tensor y2 = conv2d(x, w, Tensor(), p);
  REQUIRE(conv_algo_searches() == before + 1);  // cached
  REQUIRE(to_vector<float>(to_cpu(y1)) == to_vector<float>(to_cpu(y2)));
  // Each pass has its own entry, and so does each math mode.
  conv2d_backward_input(y1, w, x.shape(), p);
  conv2d_backward_weight(y1, x, w.shape(), p);
  REQUIRE(conv_algo_searches() == before + 3);
  conv2d_backward_input(y1, w, x.shape(), p);
  conv2d_backward_weight(y1, x, w.shape(), p);
  REQUIRE(conv_algo_searches() == before + 3);
  {
    Tf32On on;
    conv2d(x, w, Tensor(), p);
    REQUIRE(conv_algo_searches() == before + 4);
  }
  // float64 is a different key too.
  conv2d(x.to(DType::Float64), w.to(DType::Float64), Tensor(), p);
  REQUIRE(conv_algo_searches() == before + 5);
}

TEST_CASE("cuda conv2d: the searching call and the cached call both match the CPU", "[cuda][conv][cache]") {
  // The first call of a key runs the pass inside the search (each candidate until
  // one runs); later calls run the cached algorithm. Both paths, all three passes.
  using cuda::detail::conv_algo_searches;
  const Tensor x = random({2, 6, 17, 21}, 40), w = random({10, 6, 5, 3}, 41);  // shapes no other test uses
  const Conv2dParams p = conv_params({2, 1}, {2, 1});
  const Tensor y = conv2d(x, w, Tensor(), p), gy = random(y.shape(), 42);
  const Tensor gx = conv2d_backward_input(gy, w, x.shape(), p), gw = conv2d_backward_weight(gy, x, w.shape(), p);
  const Tensor xg = to_gpu(x), wg = to_gpu(w), gyg = to_gpu(gy);
  const int64_t before = conv_algo_searches();
  std::vector<float> first;
  for (int call = 0; call < 2; ++call) {
    INFO("call " << call);
    const Tensor yg = conv2d(xg, wg, Tensor(), p);
    require_close(yg, y, 1e-4, "conv2d forward");
    require_close(conv2d_backward_input(gyg, wg, x.shape(), p), gx, 1e-4, "conv2d backward input");
    require_close(conv2d_backward_weight(gyg, xg, w.shape(), p), gw, 1e-4, "conv2d backward weight");
    REQUIRE(conv_algo_searches() == before + 3);  // searched on the first call only
    if (call == 0) first = to_vector<float>(to_cpu(yg));
    if (call == 1) REQUIRE(to_vector<float>(to_cpu(yg)) == first);  // the algorithm that ran is the one cached
  }
}

TEST_CASE("cuda conv2d's algorithm search returns no cached memory to the driver", "[cuda][conv][cache]") {
  // Emptying the cache after each search synchronised the device and released every
  // free segment, once per new shape and pass (about 60 times in ResNet-18's first step).
  // A free 64 MiB segment of another stream: the convolution cannot reuse it, so only
  // emptying the cache could return it.
  const cuda::Stream side = cuda::Stream::create(0);
  {
    cuda::StreamGuard guard(side);
    const Tensor big = empty({64 << 20}, TensorOptions(DType::UInt8, Device::cuda()));
  }
  cuda::synchronize();
  const int64_t reserved = cuda::memory_stats(0).reserved_bytes;
  const int64_t before = cuda::detail::conv_algo_searches();
  const Tensor x = random({3, 4, 13, 11}, 50), w = random({6, 4, 3, 3}, 51);  // shapes no other test uses
  const Conv2dParams p = conv_params({1, 1}, {1, 1});
  require_close(conv2d(to_gpu(x), to_gpu(w), Tensor(), p), conv2d(x, w, Tensor(), p), 1e-4, "conv2d");
  REQUIRE(cuda::detail::conv_algo_searches() == before + 1);
  REQUIRE(cuda::memory_stats(0).reserved_bytes >= reserved);  // the free segment is still cached
}

TEST_CASE("cuda matmul keeps one cuBLAS workspace per stream", "[cuda][gemm][stream]") {
  // cublasSetStream resets the handle to cuBLAS's default workspace; each stream gets
  // its own from ddl's allocator instead (Note [cuBLAS workspace per stream] in dnn.cpp),
  // made on the stream's first GEMM and held, so it counts as allocated from then on:
  // 32 MiB on sm_90, else 10 MiB (a segment of its own in the caching allocator).
  const int64_t want_held = cuda::detail::compute_capability(0) == 90 ? int64_t{32} << 20 : int64_t{10} << 20;
  const Tensor a = random({256, 384}, 60), b = random({384, 128}, 61);
  const Tensor want = matmul(a, b);
  const cuda::Stream s1 = cuda::Stream::create(0), s2 = cuda::Stream::create(0);
  std::vector<float> got1, got2;
  {
    cuda::StreamGuard guard(s1);
    const Tensor ag = to_gpu(a), bg = to_gpu(b);
    const int64_t before = cuda::memory_stats(0).allocated_bytes;
    got1 = to_vector<float>(to_cpu(matmul(ag, bg)));
    REQUIRE(cuda::memory_stats(0).allocated_bytes - before == want_held);  // the workspace of s1
    REQUIRE(to_vector<float>(to_cpu(matmul(ag, bg))) == got1);
    REQUIRE(cuda::memory_stats(0).allocated_bytes == before + want_held);  // reused, not made again
    require_close(matmul(ag, bg), want, 1e-4, "A B on s1");
  }
  {
    cuda::StreamGuard guard(s2);
    const Tensor ag = to_gpu(a), bg = to_gpu(b);
    const int64_t before = cuda::memory_stats(0).allocated_bytes;
    got2 = to_vector<float>(to_cpu(matmul(ag, bg)));
    REQUIRE(cuda::memory_stats(0).allocated_bytes - before == want_held);  // s2 has a workspace of its own
  }
  REQUIRE(got2 == got1);  // bitwise the same on another stream
}
#endif

namespace {

// batch_norm on both devices from the same inputs and running stats; compares
// y, save_mean, save_invstd, the updated running stats, then every gradient.
void check_batch_norm(const Shape& xs, DType dt, bool training, bool affine, bool running, double eps, uint64_t seed) {
  INFO("x " << xs << " training " << training << " affine " << affine << " running " << running << " eps " << eps);
  const double rtol = tol(dt);
  const int64_t c = xs[1];
  const Tensor x = random(xs, seed, dt).mul_(2.0).add_(0.5);
  const Tensor w = affine ? random({c}, seed + 1, dt) : Tensor(), b = affine ? random({c}, seed + 2, dt) : Tensor();
  Tensor rm = running ? random({c}, seed + 3, dt) : Tensor();
  Generator var_gen(seed + 4);
  Tensor rv = running ? rand({c}, var_gen, dt).add_(0.5) : Tensor();
  Tensor rm_g = to_gpu(rm), rv_g = to_gpu(rv);
  const BatchNormResult want = batch_norm(x, w, b, rm, rv, training, 0.1, eps);
  const BatchNormResult got = batch_norm(to_gpu(x), to_gpu(w), to_gpu(b), rm_g, rv_g, training, 0.1, eps);
  require_close(got.y, want.y, rtol, "batch_norm y");
  require_close(got.save_mean, want.save_mean, rtol, "save_mean");
  require_close(got.save_invstd, want.save_invstd, rtol, "save_invstd");
  if (running) {
    require_close(rm_g, rm, rtol, "running_mean");
    require_close(rv_g, rv, rtol, "running_var (unbiased batch variance)");
  }
  const Tensor gy = random(xs, seed + 5, dt);
  const bool batch_stats = training || !running;
  for (std::array<bool, 3> needs : {std::array<bool, 3>{true, affine, affine}, std::array<bool, 3>{false, true, true},
                                    std::array<bool, 3>{true, false, false}}) {
    INFO("needs " << needs[0] << needs[1] << needs[2]);
    const BatchNormGrads gw = batch_norm_backward(gy, x, w, want.save_mean, want.save_invstd, batch_stats, eps, needs);
    const BatchNormGrads gg =
        batch_norm_backward(to_gpu(gy), to_gpu(x), to_gpu(w), got.save_mean, got.save_invstd, batch_stats, eps, needs);
    // cuDNN's input gradient accumulates in the data type: a little looser in float32.
    if (needs[0]) require_close(gg.grad_input, gw.grad_input, dt == DType::Float32 ? 3e-4 : 1e-9, "grad_input");
    if (needs[1]) require_close(gg.grad_weight, gw.grad_weight, rtol, "grad_weight");
    if (needs[2]) require_close(gg.grad_bias, gw.grad_bias, rtol, "grad_bias");
  }
}

}  // namespace

TEST_CASE("cuda batch_norm matches the CPU in training and eval, forward and backward", "[cuda][batch_norm]") {
  uint64_t seed = 300;
  for (DType dt : {DType::Float32, DType::Float64}) {
    // {40, 3, 7, 9}: a chunk's start steps n and carries s (S = 63 does not divide 256);
    // {128, 5, 33, 31}: more elements than the capped grid's threads, so the channel steps.
    for (const Shape& xs : std::vector<Shape>{
             {16, 64, 8, 8}, {3, 5, 7, 9}, {1, 4, 5, 5}, {32, 10}, {6, 3, 11}, {40, 3, 7, 9}, {128, 5, 33, 31}}) {
      check_batch_norm(xs, dt, true, true, true, 1e-5, seed += 10);
      check_batch_norm(xs, dt, false, true, true, 1e-5, seed += 10);
      check_batch_norm(xs, dt, true, false, false, 1e-5, seed += 10);
    }
    // A large eps shows whether any kernel normalises with the wrong one (the
    // cuDNN backward must get the forward's eps along with the saved invstd).
    check_batch_norm({8, 6, 4, 4}, dt, true, true, true, 0.5, seed += 10);
    check_batch_norm({8, 6, 4, 4}, dt, false, false, true, 0.5, seed += 10);
  }
}

TEST_CASE("cuda batch_norm with 16-bit parameters matches the CPU, and refuses a mix with the CPU's message",
          "[cuda][batch_norm]") {
  // Note [16-bit batch norm parameters] (tensor/ops/norm.h): widened to float32 around the 16-bit
  // kernels of test_cuda_half.cpp on both devices, so the two agree within a 16-bit rounding.
  for (DType dt : {DType::BFloat16, DType::Float16}) {
    INFO(dt);
    const double tol = dt == DType::BFloat16 ? 2e-2 : 4e-3;
    const auto close = [&](const Tensor& gpu, const Tensor& cpu) {
      REQUIRE(gpu.device().is_cuda());
      REQUIRE(gpu.dtype() == cpu.dtype());
      REQUIRE(allclose(gpu.to(Device::cpu()).to(DType::Float64), cpu.to(DType::Float64), tol, tol));
    };
    const Tensor x = random({4, 3, 5, 5}, 80, dt), w = random({3}, 81, dt), b = random({3}, 82, dt);
    const Tensor gy = random({4, 3, 5, 5}, 83, dt);
    Tensor rm = zeros({3}, TensorOptions(dt)), rv = ones({3}, TensorOptions(dt));
    Tensor rm_g = to_gpu(rm), rv_g = to_gpu(rv);
    for (bool training : {true, false}) {
      INFO("training " << training);
      const BatchNormResult r = batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5);
      const BatchNormResult rg = batch_norm(to_gpu(x), to_gpu(w), to_gpu(b), rm_g, rv_g, training, 0.1, 1e-5);
      close(rg.y, r.y);
      REQUIRE(rm_g.dtype() == dt);
      close(rm_g, rm);
      close(rv_g, rv);
      const BatchNormGrads g =
          batch_norm_backward(gy, x, w, r.save_mean, r.save_invstd, training, 1e-5, {true, true, true});
      const BatchNormGrads gg = batch_norm_backward(to_gpu(gy), to_gpu(x), to_gpu(w), rg.save_mean, rg.save_invstd,
                                                    training, 1e-5, {true, true, true});
      close(gg.grad_input, g.grad_input);
      close(gg.grad_weight, g.grad_weight);
      close(gg.grad_bias, g.grad_bias);
    }
    // 16-bit weight with a float32 bias: the CPU's message on both devices.
    const Tensor b32 = b.to(DType::Float32);
    const auto mixed = Catch::Contains("batch_norm: bias [3] is float32"), needs = Catch::Contains("needs ");
    REQUIRE_THROWS_WITH(batch_norm(x, w, b32, Tensor(), Tensor(), true, 0.1, 1e-5), mixed && needs);
    REQUIRE_THROWS_WITH(batch_norm(to_gpu(x), to_gpu(w), to_gpu(b32), Tensor(), Tensor(), true, 0.1, 1e-5),
                        mixed && needs);
  }
}

namespace {

Pool2dParams pool_params(std::array<int64_t, 2> k, std::array<int64_t, 2> s, std::array<int64_t, 2> pad,
                         std::array<int64_t, 2> dil = {1, 1}, bool ceil = false, bool include_pad = true) {
  Pool2dParams p;
  p.kernel = k, p.stride = s, p.padding = pad, p.dilation = dil, p.ceil_mode = ceil, p.count_include_pad = include_pad;
  return p;
}

}  // namespace

TEST_CASE("cuda max_pool2d matches the CPU exactly, indices included", "[cuda][pool]") {
  const std::vector<std::pair<Shape, Pool2dParams>> cases = {
      {{8, 64, 32, 32}, pool_params({2, 2}, {2, 2}, {0, 0})},             // VGG
      {{2, 3, 11, 13}, pool_params({3, 3}, {2, 2}, {1, 1})},              // overlapping, padded
      {{1, 4, 9, 10}, pool_params({3, 2}, {2, 3}, {1, 0}, {2, 1})},       // dilation
      {{2, 2, 7, 7}, pool_params({2, 2}, {2, 2}, {0, 0}, {1, 1}, true)},  // ceil_mode
      {{3, 2, 5, 6}, pool_params({3, 3}, {1, 1}, {1, 1})},                // stride 1
  };
  uint64_t seed = 500;
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const auto& [xs, p] : cases) {
      INFO("x " << xs << " kernel " << p.kernel[0] << "x" << p.kernel[1] << " stride " << p.stride[0]);
      const Tensor x = random(xs, seed += 10, dt);
      const auto [y, idx] = max_pool2d_with_indices(x, p);
      const auto [yg, idxg] = max_pool2d_with_indices(to_gpu(x), p);
      require_equal(yg, y, "max_pool2d y");
      require_equal(idxg, idx, "max_pool2d indices");
      const Tensor gy = random(y.shape(), seed + 1, dt);
      // Overlapping windows add in the CPU's order too (Note [Deterministic max-pool backward]).
      require_equal(max_pool2d_backward(to_gpu(gy), idxg, xs), max_pool2d_backward(gy, idx, xs), "max_pool2d backward");
    }
  }
}

TEST_CASE("cuda avg_pool2d matches the CPU exactly, forward and backward", "[cuda][pool]") {
  const std::vector<std::pair<Shape, Pool2dParams>> cases = {
      {{8, 64, 16, 16}, pool_params({2, 2}, {2, 2}, {0, 0})},
      {{2, 3, 11, 13}, pool_params({3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true)},
      {{2, 3, 11, 13}, pool_params({3, 3}, {2, 2}, {1, 1}, {1, 1}, false, false)},
      {{1, 2, 7, 8}, pool_params({3, 2}, {2, 2}, {1, 1}, {1, 1}, true, true)},  // ceil_mode
      {{1, 2, 7, 8}, pool_params({3, 2}, {2, 2}, {1, 1}, {1, 1}, true, false)},
      {{4, 5, 6, 6}, pool_params({4, 4}, {1, 1}, {2, 2})},  // 4x4 stride 1: many windows per input
  };
  uint64_t seed = 700;
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (const auto& [xs, p] : cases) {
      INFO("x " << xs << " kernel " << p.kernel[0] << "x" << p.kernel[1] << " ceil " << p.ceil_mode << " include_pad "
                << p.count_include_pad);
      const Tensor x = random(xs, seed += 10, dt);
      const Tensor y = avg_pool2d(x, p);
      require_equal(avg_pool2d(to_gpu(x), p), y, "avg_pool2d");
      const Tensor gy = random(y.shape(), seed + 1, dt);
      require_equal(avg_pool2d_backward(to_gpu(gy), xs, p), avg_pool2d_backward(gy, xs, p), "avg_pool2d backward");
    }
  }
}

TEST_CASE("cuda matmul, conv2d and batch_norm on a non-default stream match the CPU", "[cuda][stream]") {
  // Uploads, kernels, cuBLAS/cuDNN calls and downloads all run on s (a non-blocking
  // stream, unordered with the default one), so a call left on the default stream
  // would race with its inputs or outputs.
  const cuda::Stream s = cuda::Stream::create(0);
  {
    cuda::StreamGuard guard(s);
    for (DType dt : {DType::Float32, DType::Float64}) {
      const Tensor a = random({64, 576}, 500, dt), b = random({576, 128}, 501, dt);
      require_close(matmul(to_gpu(a), to_gpu(b)), matmul(a, b), tol(dt), "A B on a stream");
      const Tensor ab = random({4, 9, 17}, 502, dt), bb = random({4, 17, 6}, 503, dt);
      require_close(matmul(to_gpu(ab), to_gpu(bb)), matmul(ab, bb), tol(dt), "batched on a stream");
      check_batch_norm({16, 64, 8, 8}, dt, true, true, true, 1e-5, 510);
      check_batch_norm({3, 5, 7, 9}, dt, false, true, true, 1e-5, 520);
    }
    uint64_t seed = 530;
    for (const ConvCase& c : conv_cases()) check_conv(c, DType::Float32, 1e-4, seed += 10);
    check_conv(conv_cases()[4], DType::Float64, 1e-10, seed += 10);
  }
  s.synchronize();
  REQUIRE(cuda::current_stream(0).handle() == nullptr);  // the guard restored the default stream
}

TEST_CASE("cuda GEMM reads narrowed 2-D views with a padded leading dimension", "[cuda][gemm]") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    const int64_t m = 13, k = 29, n = 11;
    // Each operand is a column window of a wider matrix: row stride (lda) > columns, nonzero offset.
    const Tensor a = random({m, k + 7}, 600, dt).narrow(1, 3, k);
    const Tensor b = random({k, n + 5}, 601, dt).narrow(1, 2, n);
    const Tensor at = random({k, m + 4}, 602, dt).narrow(1, 1, m).t();  // transposed, padded
    const Tensor a_gpu = to_gpu(random({m, k + 7}, 600, dt)).narrow(1, 3, k);
    const Tensor b_gpu = to_gpu(random({k, n + 5}, 601, dt)).narrow(1, 2, n);
    const Tensor at_gpu = to_gpu(random({k, m + 4}, 602, dt)).narrow(1, 1, m).t();
    REQUIRE(a_gpu.stride(0) == k + 7);
    REQUIRE_FALSE(a_gpu.is_contiguous());
    require_close(matmul(a_gpu, b_gpu), matmul(a, b), tol(dt), "narrowed A B");
    require_close(matmul(at_gpu, b_gpu), matmul(at, b), tol(dt), "narrowed A^T B");
    require_close(matmul(b_gpu.t(), a_gpu.t()), matmul(b.t(), a.t()), tol(dt), "narrowed B^T A^T");
    // A narrowed row block too: rows [2, 2 + m) of a taller matrix keep lda = k + 7.
    const Tensor tall = random({m + 6, k + 7}, 603, dt);
    require_close(matmul(to_gpu(tall).narrow(0, 2, m).narrow(1, 3, k), b_gpu),
                  matmul(tall.narrow(0, 2, m).narrow(1, 3, k), b), tol(dt), "row and column window");
  }
}

TEST_CASE("cuda conv2d with no input channels gives the bias, as on the CPU", "[cuda][conv]") {
  // cuDNN rejects C = 0: the frontend fills y with the bias without a kernel.
  const Tensor x = zeros({2, 0, 5, 4}), w = zeros({3, 0, 3, 3}), b = random({3}, 700);
  const Conv2dParams p = conv_params({1, 1}, {1, 1});
  const Tensor y = conv2d(x, w, b, p);
  require_equal(conv2d(to_gpu(x), to_gpu(w), to_gpu(b), p), y, "C = 0 forward");
  const Tensor gy = random(y.shape(), 701);
  REQUIRE(conv2d_backward_input(to_gpu(gy), to_gpu(w), x.shape(), p).shape() == x.shape());
  REQUIRE(conv2d_backward_weight(to_gpu(gy), to_gpu(x), w.shape(), p).shape() == w.shape());
}
