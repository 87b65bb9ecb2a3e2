// The counter scheme every device shares (tensor/kernels/random_functors.h): element i of a
// draw is Philox-4x32-10 on counter offset + i, lanes 0-1 make u0 and lanes 2-3 u1.
// Checked against an independent re-derivation from philox4x32 (the Random123-checked
// public function) and the documented formulas, and against draw_element, the
// __host__ __device__ function tensor/cuda/random.cu runs on the GPU, compiled here
// for the host. tests/cuda/test_cuda_core.cpp compares real GPU draws with the CPU's.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/tensor/kernels/random_functors.h>

using namespace ddl;

namespace {

// The two uniforms of element i of a draw starting at `offset`, re-derived by hand.
std::pair<double, double> uniforms(uint64_t seed, uint64_t offset, int64_t i, bool dbl) {
  uint32_t r[4];
  philox4x32(offset + static_cast<uint64_t>(i), seed, r);
  auto unit = [dbl](uint32_t hi, uint32_t lo) {
    return dbl ? static_cast<double>((uint64_t{hi} << 21) ^ (lo >> 11)) / 9007199254740992.0  // 2^53
               : static_cast<double>(hi >> 8) / 16777216.0;                                   // 2^24
  };
  return {unit(r[0], r[1]), unit(r[2], r[3])};
}

template <typename T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace

TEST_CASE("rand, bernoulli, randint, uniform_ follow the shared counter scheme bit for bit", "[random]") {
  const uint64_t seed = 0x1234567890abcdefull;
  Generator g(seed);
  g.set_offset(1000);
  const auto f = to_vector<float>(rand({257}, g));                  // counters 1000..1256
  const auto d = to_vector<double>(rand({33}, g, DType::Float64));  // 1257..1289
  const auto b = to_vector<float>(bernoulli({64}, 0.3, g));         // 1290..1353
  const auto k = to_vector<int64_t>(randint(-5, 7, {100}, g));      // 1354..1453, drawn in float64
  Tensor u = empty({50}, DType::Float64);
  uniform_(u, -2.0, 3.0, g);  // 1454..1503
  REQUIRE(g.offset() == 1504);
  for (int64_t i = 0; i < 257; ++i) REQUIRE(same_bits(f[i], static_cast<float>(uniforms(seed, 1000, i, false).first)));
  for (int64_t i = 0; i < 33; ++i) REQUIRE(same_bits(d[i], uniforms(seed, 1257, i, true).first));
  for (int64_t i = 0; i < 64; ++i) REQUIRE(b[i] == (uniforms(seed, 1290, i, false).first < 0.3 ? 1.0f : 0.0f));
  for (int64_t i = 0; i < 100; ++i) {
    const int64_t want = -5 + std::min<int64_t>(static_cast<int64_t>(uniforms(seed, 1354, i, true).first * 12), 11);
    REQUIRE(k[i] == want);
  }
  const auto uv = to_vector<double>(u);
  for (int64_t i = 0; i < 50; ++i) REQUIRE(same_bits(uv[i], std::fma(5.0, uniforms(seed, 1454, i, true).first, -2.0)));
}

// A 16-bit uniform keeps the top 11 (float16) or 8 (bfloat16) of the float32 draw's
// 24 bits, so it is exact in its type and below 1, as PyTorch's uniform_real_distribution.
std::vector<double> truncated(const Tensor& f32, DType h) {
  const double scale = h == DType::Float16 ? 2048.0 : 256.0;
  std::vector<double> v = to_vector<double>(f32);
  for (double& x : v) x = std::floor(x * scale) / scale;
  return v;
}

TEST_CASE("16-bit draws are the float32 draws rounded once, on the same counters", "[random][half]") {
  for (const DType h : {DType::Float16, DType::BFloat16}) {
    INFO(h);
    Generator a(41), b(41);
    const Tensor r = rand({300}, a, h), n = randn({300}, a, h), m = bernoulli({300}, 0.3, a, h);
    Tensor u = empty({300}, h), v = empty({300}, h);
    uniform_(u, -2.0, 3.0, a);
    normal_(v, 1.0, 0.5, a);
    REQUIRE(r.dtype() == h);
    REQUIRE(m.dtype() == h);
    REQUIRE(to_vector<double>(r) == truncated(rand({300}, b), h));
    REQUIRE(to_vector<double>(n) == to_vector<double>(randn({300}, b).to(h)));
    REQUIRE(to_vector<double>(m) == to_vector<double>(bernoulli({300}, 0.3, b).to(h)));
    // uniform_(-2, 3): fma(5, u, -2) on the truncated unit draw, rounded to float32, then to h.
    std::vector<double> want = truncated(rand({300}, b), h);
    for (double& x : want) x = static_cast<double>(static_cast<float>(std::fma(5.0, x, -2.0)));
    REQUIRE(to_vector<double>(u) == to_vector<double>(from_vector(want).to(h)));
    Tensor vf = empty({300});
    normal_(vf, 1.0, 0.5, b);
    REQUIRE(to_vector<double>(v) == to_vector<double>(vf.to(h)));
    REQUIRE(a.offset() == b.offset());
  }
}

TEST_CASE("randn is Box-Muller on the counter's two uniforms", "[random]") {
  Generator g(99);
  const auto z = to_vector<double>(randn({200}, g, DType::Float64));
  for (int64_t i = 0; i < 200; ++i) {
    const auto [u0, u1] = uniforms(99, 0, i, true);
    const double want = std::sqrt(-2.0 * std::log(1.0 - u0)) * std::cos(2.0 * M_PI * u1);
    REQUIRE(same_bits(z[i], want));
  }
}

TEST_CASE("the device functor compiled for the host reproduces every CPU draw", "[random]") {
  using random_math::Dist;
  using random_math::Transform;
  for (const DType dt : {DType::Float32, DType::Float64}) {
    const bool dbl = dt == DType::Float64;
    for (const Transform& t : {Transform{Dist::Uniform, 0.0, 1.0}, Transform{Dist::Normal, 0.0, 0.0},
                               Transform{Dist::Bernoulli, 0.7, 0.0}, Transform{Dist::Uniform, -1.5, 2.5}}) {
      Generator g(5);
      g.set_offset(77);
      Tensor x;
      if (t.dist == Dist::Normal) {
        x = randn({300}, g, dt);
      } else if (t.dist == Dist::Bernoulli) {
        x = bernoulli({300}, t.a, g, dt);
      } else {
        x = empty({300}, dt);
        uniform_(x, t.a, t.b, g);
      }
      const Tensor as_double = x.to(DType::Float64);
      const auto got = to_vector<double>(as_double);
      for (int64_t i = 0; i < 300; ++i) {
        const double v = random_math::draw_element(5, 77, i, dbl, t);
        REQUIRE(same_bits(got[i], dbl ? v : static_cast<double>(static_cast<float>(v))));
      }
    }
  }
}
