// max_pool2d on CUDA against the CPU, bit for bit: forward (values and indices) and
// backward in float32, float16 and bfloat16 (CUDA reads 16 bits directly, the CPU
// widens to float32 copies), with windows that cannot share an input (the backward's
// plain scatter, Note [Disjoint pooling windows] in tensor/ops/pool.cpp) and overlapping
// ones (its sort); ties, NaN, -0, odd sizes, batch 1, unbatched and strided inputs.
// Runs only with a GPU (tests/cuda/cuda_main.cpp exits 77 otherwise).
#include <catch2/catch.hpp>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();

std::vector<uint8_t> bytes(const Tensor& t) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  std::vector<uint8_t> out(static_cast<size_t>(c.nbytes()));
  if (!out.empty()) std::memcpy(out.data(), c.raw_data(), out.size());
  return out;
}

Pool2dParams pool(std::array<int64_t, 2> k, std::array<int64_t, 2> s, std::array<int64_t, 2> pad,
                  std::array<int64_t, 2> dil = {1, 1}, bool ceil = false) {
  Pool2dParams p;
  p.kernel = k, p.stride = s, p.padding = pad, p.dilation = dil, p.ceil_mode = ceil;
  return p;
}

struct Case {
  std::string name;
  Shape x;
  Pool2dParams p;
  bool disjoint;  // what max_pool2d_windows_disjoint must say
};

const std::vector<Case> kCases = {
    {"VGG 2x2/2", {2, 16, 32, 32}, pool({2, 2}, {2, 2}, {0, 0}), true},
    {"2x2/2 odd size", {3, 5, 7, 9}, pool({2, 2}, {2, 2}, {0, 0}), true},
    {"2x2/2 odd size ceil_mode", {1, 3, 7, 9}, pool({2, 2}, {2, 2}, {0, 0}, {1, 1}, true), true},
    {"3x3/3 pad 1", {2, 4, 11, 10}, pool({3, 3}, {3, 3}, {1, 1}), true},
    {"3x3/3 pad 1 ceil_mode", {1, 2, 10, 8}, pool({3, 3}, {3, 3}, {1, 1}, {1, 1}, true), true},
    {"3x2/3x2 pad 1", {2, 3, 9, 8}, pool({3, 2}, {3, 2}, {1, 1}), true},
    {"kernel 2 dilation 2 stride 3", {2, 3, 13, 11}, pool({2, 2}, {3, 3}, {0, 0}, {2, 2}), true},
    {"kernel 2 dilation 3 stride 2 (interleaved)", {1, 2, 12, 9}, pool({2, 2}, {2, 2}, {0, 0}, {3, 3}), true},
    {"1x1/1", {1, 3, 5, 6}, pool({1, 1}, {1, 1}, {0, 0}), true},
    {"ResNet stem 3x3/2 pad 1", {1, 4, 112, 112}, pool({3, 3}, {2, 2}, {1, 1}), false},
    {"3x3/2 pad 1 odd size", {2, 8, 17, 15}, pool({3, 3}, {2, 2}, {1, 1}), false},
    {"2x2/1", {2, 3, 6, 7}, pool({2, 2}, {1, 1}, {0, 0}), false},
    {"kernel 2 dilation 2 stride 2", {1, 3, 9, 10}, pool({2, 2}, {2, 2}, {0, 0}, {2, 2}), false},
    {"2x2/2 in rows, 3/1 in columns", {2, 2, 8, 9}, pool({2, 3}, {2, 1}, {0, 1}), false},
    // Padding with dilation: columns of width 1 hold no window position, so indices are stray.
    {"kernel 2 dilation 2 stride 3 pad 1, width 1", {1, 2, 5, 1}, pool({2, 2}, {3, 3}, {1, 1}, {2, 2}), false},
};

// Values in float32, then rounded to dt: few distinct ones (ties) or N(0, 1) with NaN
// and +-inf. The 16-bit roundings make more ties.
Tensor input(const Shape& s, uint64_t seed, DType dt, bool ties) {
  Generator g(seed);
  Tensor x = ties ? randint(-3, 4, s, g, DType::Float32) : randn(s, g);
  const Tensor flat = x.view({x.numel()});
  if (!ties && x.numel() > 20) {
    flat.narrow(0, 3, 1).fill_(std::numeric_limits<double>::quiet_NaN());
    flat.narrow(0, 11, 1).fill_(std::numeric_limits<double>::infinity());
    flat.narrow(0, 17, 1).fill_(-std::numeric_limits<double>::infinity());
  }
  return x.to(dt);
}

// A cotangent with -0 in it (0 + -0 is +0 in the sums), no NaN or inf (whose sums the
// CPU and CUDA spell with different NaN bits).
Tensor cotangent(const Shape& s, uint64_t seed, DType dt) {
  Generator g(seed);
  Tensor gy = randn(s, g);
  const Tensor flat = gy.view({gy.numel()});
  for (int64_t i = 0; i < gy.numel(); i += 7) flat.narrow(0, i, 1).fill_(-0.0);
  return gy.to(dt);
}

// Forward and backward of x_cpu and its CUDA copy x_gpu (the same values, any strides).
void check(const Tensor& x_cpu, const Tensor& x_gpu, const Pool2dParams& p, uint64_t seed) {
  const DType dt = x_cpu.dtype();
  const auto [y, idx] = max_pool2d_with_indices(x_cpu, p);
  const auto [yg, idxg] = max_pool2d_with_indices(x_gpu, p);
  REQUIRE(yg.device() == kCuda);
  REQUIRE(yg.dtype() == dt);
  REQUIRE(yg.shape() == y.shape());
  REQUIRE(bytes(yg) == bytes(y));
  REQUIRE(bytes(idxg) == bytes(idx));
  // The float32 round trip this path replaces, on the GPU.
  REQUIRE(bytes(yg) == bytes(max_pool2d_with_indices(x_gpu.to(DType::Float32), p).first.to(dt)));

  const Shape xs = x_cpu.shape();
  const Tensor gy = cotangent(y.shape(), seed, dt), gyg = gy.to(kCuda);
  const std::vector<uint8_t> want = bytes(max_pool2d_backward(gy, idx, xs));
  REQUIRE(bytes(max_pool2d_backward(gy, idx, xs, p)) == want);
  const Tensor gx_sorted = max_pool2d_backward(gyg, idxg, xs), gx_p = max_pool2d_backward(gyg, idxg, xs, p);
  REQUIRE(gx_p.device() == kCuda);
  REQUIRE(gx_p.dtype() == dt);
  REQUIRE(gx_p.shape() == xs);
  REQUIRE(bytes(gx_sorted) == want);
  REQUIRE(bytes(gx_p) == want);
  REQUIRE(bytes(max_pool2d_backward(gyg.to(DType::Float32), idxg, xs, p).to(dt)) == want);
}

}  // namespace

TEST_CASE("the cases take the backward path they are meant to", "[cuda][pool]") {
  // The rule itself is checked by brute force in tests/tensor/test_pool.cpp.
  for (const Case& c : kCases) {
    INFO(c.name);
    REQUIRE(max_pool2d_windows_disjoint(c.p) == c.disjoint);
  }
}

TEST_CASE("cuda max_pool2d in float32, float16 and bfloat16 matches the CPU bit for bit", "[cuda][pool][half]") {
  uint64_t seed = 1600;
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (const Case& c : kCases) {
      for (bool ties : {true, false}) {
        INFO(c.name << " " << dt << (ties ? " ties" : " randn"));
        const Tensor x = input(c.x, seed += 10, dt, ties);
        check(x, x.to(kCuda), c.p, seed + 1);
      }
    }
  }
}

TEST_CASE("cuda max_pool2d on strided and unbatched inputs matches the CPU bit for bit", "[cuda][pool][half]") {
  uint64_t seed = 1700;
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (const Pool2dParams& p : {pool({2, 2}, {2, 2}, {0, 0}), pool({3, 3}, {2, 2}, {1, 1})}) {
      INFO(dt << " kernel " << p.kernel[0] << " stride " << p.stride[0]);
      // [N, C, W, H] transposed to [N, C, H, W]: the kernel reads a contiguous copy.
      const Tensor base = input({2, 3, 9, 11}, seed += 10, dt, true);
      const Tensor xg = base.to(kCuda).transpose(2, 3);
      REQUIRE(!xg.is_contiguous());
      check(base.transpose(2, 3), xg, p, seed + 1);
      // A slice of channels, and an unbatched [C, H, W] input.
      const Tensor wide = input({2, 6, 10, 13}, seed += 10, dt, false);
      check(wide.narrow(1, 1, 3), wide.to(kCuda).narrow(1, 1, 3), p, seed + 1);
      const Tensor chw = input({5, 13, 10}, seed += 10, dt, true);
      check(chw, chw.to(kCuda), p, seed + 1);
    }
  }
}
