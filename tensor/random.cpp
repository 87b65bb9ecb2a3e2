// Philox-4x32-10 counter-based random numbers (Salmon et al., SC'11).
// Element i of a draw uses counter (offset + i / 4) and lane i % 4, so any
// thread may compute any element: results never depend on the thread count.
#include "tensor/random.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tensor/elementwise.h"
#include "tensor/parallel.h"

namespace ddl {

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

void philox4x32(uint64_t ctr, uint64_t seed, uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  uint32_t c0 = static_cast<uint32_t>(ctr), c1 = static_cast<uint32_t>(ctr >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c0, p1 = static_cast<uint64_t>(kM1) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0, n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

namespace {

// Uniform in [0, 1) with 24 (float) or 53 (double) random bits.
inline double to_unit(uint32_t hi, uint32_t lo, bool dbl) {
  if (dbl) return static_cast<double>((static_cast<uint64_t>(hi) << 21) ^ (lo >> 11)) * 0x1.0p-53;
  return static_cast<double>(hi >> 8) * 0x1.0p-24;
}

// Calls fn(i, u0, u1) for every element i with two independent uniforms:
// element i owns counter offset + i, whose four 32-bit lanes make the pair.
template <typename Fn>
void for_each_uniform_pair(int64_t n, Generator& gen, bool dbl, const Fn& fn) {
  const Generator::Draw draw = gen.reserve(static_cast<uint64_t>(n));
  const uint64_t base = draw.offset, seed = draw.seed;
  parallel_for(0, n, 4096, [&](int64_t b, int64_t e) {
    uint32_t r[4];
    for (int64_t i = b; i < e; ++i) {
      philox4x32(base + static_cast<uint64_t>(i), seed, r);
      fn(i, to_unit(r[0], r[1], dbl), to_unit(r[2], r[3], dbl));
    }
  });
}

template <typename Fn>
Tensor generate(const Shape& shape, Generator& gen, TensorOptions opts, const char* op, const Fn& fn) {
  Tensor t = empty(shape, opts.dtype);
  const bool dbl = opts.dtype == DType::Float64;
  DDL_DISPATCH_NUMERIC(opts.dtype, op, [&] {
    scalar_t* p = t.data<scalar_t>();
    for_each_uniform_pair(t.numel(), gen, dbl,
                          [&](int64_t i, double u0, double u1) { p[i] = static_cast<scalar_t>(fn(u0, u1)); });
  });
  return t.to(opts.device);
}

}  // namespace

Tensor rand(const Shape& shape, Generator& gen, TensorOptions opts) {
  DDL_CHECK(is_floating(opts.dtype), "rand: expected a float dtype, got ", opts.dtype);
  return generate(shape, gen, opts, "rand", [](double u0, double) { return u0; });
}

Tensor randn(const Shape& shape, Generator& gen, TensorOptions opts) {
  DDL_CHECK(is_floating(opts.dtype), "randn: expected a float dtype, got ", opts.dtype);
  // Box-Muller on (1 - u0) in (0, 1] so the log is finite.
  return generate(shape, gen, opts, "randn", [](double u0, double u1) {
    return std::sqrt(-2.0 * std::log(1.0 - u0)) * std::cos(2.0 * M_PI * u1);
  });
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen, TensorOptions opts) {
  DDL_CHECK(low < high, "randint: empty range [", low, ", ", high, ")");
  const double span = static_cast<double>(high - low);
  return generate(
             shape, gen, TensorOptions(DType::Float64), "randint",
             [&](double u0, double) {
               return static_cast<double>(low + std::min<int64_t>(static_cast<int64_t>(u0 * span), high - low - 1));
             })
      .to(opts.dtype)
      .to(opts.device);
}

Tensor randperm(int64_t n, Generator& gen, TensorOptions opts) {
  DDL_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  // Fisher-Yates driven by one uniform per position, drawn in a single batch.
  const Tensor u = rand({n}, gen, DType::Float64);
  const double* up = u.data<double>();
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = std::min<int64_t>(static_cast<int64_t>(up[i] * static_cast<double>(i + 1)), i);
    std::swap(perm[i], perm[j]);
  }
  return from_vector(perm).to(opts.dtype).to(opts.device);
}

Tensor bernoulli(const Shape& shape, double p, Generator& gen, TensorOptions opts) {
  DDL_CHECK(p >= 0 && p <= 1, "bernoulli: probability ", p, " outside [0, 1]");
  return generate(shape, gen, opts, "bernoulli", [p](double u0, double) { return u0 < p ? 1.0 : 0.0; });
}

Tensor rand(const Shape& shape, TensorOptions opts) { return rand(shape, default_generator(), opts); }
Tensor randn(const Shape& shape, TensorOptions opts) { return randn(shape, default_generator(), opts); }
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions opts) {
  return randint(low, high, shape, default_generator(), opts);
}
Tensor randperm(int64_t n, TensorOptions opts) { return randperm(n, default_generator(), opts); }
Tensor rand_like(const Tensor& t) { return rand_like(t, default_generator()); }
Tensor randn_like(const Tensor& t) { return randn_like(t, default_generator()); }
Tensor rand_like(const Tensor& t, Generator& gen) { return rand(t.shape(), gen, TensorOptions(t.dtype(), t.device())); }
Tensor randn_like(const Tensor& t, Generator& gen) {
  return randn(t.shape(), gen, TensorOptions(t.dtype(), t.device()));
}

const Tensor& uniform_(const Tensor& t, double low, double high, Generator& gen) {
  DDL_CHECK(low <= high, "uniform_: low ", low, " exceeds high ", high);
  t.copy_(generate(t.shape(), gen, TensorOptions(t.dtype()), "uniform_",
                   [&](double u0, double) { return low + (high - low) * u0; }));
  return t;
}

const Tensor& normal_(const Tensor& t, double mean, double std, Generator& gen) {
  DDL_CHECK(std >= 0, "normal_: std must be non-negative, got ", std);
  t.copy_(add(mul(randn(t.shape(), gen, TensorOptions(t.dtype())), std), mean));
  return t;
}

}  // namespace ddl
