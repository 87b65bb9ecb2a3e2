// Philox-4x32-10 counter-based random numbers (Salmon et al., SC'11).
// Element i of a draw uses counter offset + i (tensor/kernels/random_functors.h), so any
// thread may compute any element: results never depend on the thread count, and
// a CUDA tensor is drawn on its GPU with the same numbers (tensor/cuda/random.cu).
// randperm shuffles on the CPU (Fisher-Yates is sequential) and copies.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/core/random.h>
#include <ddl/tensor/kernels/random_functors.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl {

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

void philox4x32(uint64_t ctr, uint64_t seed, uint32_t out[4]) { random_math::philox4x32_10(ctr, seed, out); }

namespace kernels {
DDL_DEFINE_KERNEL(random_fill_kernel, RandomFillFn);
}  // namespace kernels

namespace {

using random_math::Dist;
using random_math::Transform;

// Fills the contiguous `t` with element i = draw_element(seed, offset, i): on the
// CPU here, on other devices through their kernel (tensor/cuda/random.cu), which
// runs the same functors, so every device draws the same numbers.
void fill_cpu(const Tensor& t, uint64_t seed, uint64_t offset, const Transform& tr, const char* op) {
  const bool dbl = t.dtype() == DType::Float64;
  DDL_DISPATCH_NUMERIC(t.dtype(), op, [&] {
    scalar_t* p = t.data<scalar_t>();
    parallel_for(0, t.numel(), 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = static_cast<scalar_t>(random_math::draw_element(seed, offset, i, dbl, tr));
    });
  });
}

// A new tensor of `opts` drawn on its own device; reserves numel counters.
Tensor generate(const Shape& shape, Generator& gen, TensorOptions opts, const Transform& tr, const char* op) {
  // 16-bit floats are drawn in float32 and rounded once (the same conversion on every
  // device), as PyTorch draws them in float; a uniform from only as many bits as the
  // type holds (11 for float16, 8 for bfloat16), else 1 - 2^-24 would round to 1.
  if (is_reduced_float(opts.dtype())) {
    Transform t16 = tr;
    if (tr.dist == Dist::Uniform) t16.bits = opts.dtype() == DType::Float16 ? 11 : 8;
    return generate(shape, gen, TensorOptions(DType::Float32, opts.device()), t16, op).to(opts.dtype());
  }
  Tensor t = empty(shape, opts);
  const Generator::Draw draw = gen.reserve(static_cast<uint64_t>(t.numel()));
  if (t.numel() == 0) return t;
  if (t.device().is_cpu())
    fill_cpu(t, draw.seed, draw.offset, tr, op);
  else
    kernels::random_fill_kernel(t.device())(t, draw.seed, draw.offset, tr);
  return t;
}

// rand and randn under the name `op` the user called (rand_like, normal_, ...).
Tensor rand_as(const Shape& shape, Generator& gen, TensorOptions opts, const char* op) {
  detail::refuse_requires_grad(opts, op);
  DDL_CHECK(is_floating(opts.dtype()), op, ": expected a float dtype, got ", opts.dtype());
  return generate(shape, gen, opts, Transform{Dist::Uniform, 0.0, 1.0}, op);
}

Tensor randn_as(const Shape& shape, Generator& gen, TensorOptions opts, const char* op) {
  detail::refuse_requires_grad(opts, op);
  DDL_CHECK(is_floating(opts.dtype()), op, ": expected a float dtype, got ", opts.dtype());
  return generate(shape, gen, opts, Transform{Dist::Normal, 0.0, 0.0}, op);
}

}  // namespace

Tensor rand(const Shape& shape, Generator& gen, TensorOptions opts) { return rand_as(shape, gen, opts, "rand"); }

Tensor randn(const Shape& shape, Generator& gen, TensorOptions opts) { return randn_as(shape, gen, opts, "randn"); }

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen, TensorOptions opts) {
  detail::refuse_requires_grad(opts, "randint");
  DDL_CHECK(low < high, "randint: empty range [", low, ", ", high, ")");
  // Drawn as float64 on the target device (exact below 2^53), then converted there.
  return generate(shape, gen, TensorOptions(DType::Float64, opts.device()),
                  Transform{Dist::RandInt, static_cast<double>(low), static_cast<double>(high)}, "randint")
      .to(opts.dtype());
}

Tensor randperm(int64_t n, Generator& gen, TensorOptions opts) {
  detail::refuse_requires_grad(opts, "randperm");
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
  return from_vector(perm).to(opts.dtype()).to(opts.device());
}

Tensor bernoulli(const Shape& shape, double p, Generator& gen, TensorOptions opts) {
  detail::refuse_requires_grad(opts, "bernoulli");
  DDL_CHECK(p >= 0 && p <= 1, "bernoulli: probability ", p, " outside [0, 1]");
  return generate(shape, gen, opts, Transform{Dist::Bernoulli, p, 0.0}, "bernoulli");
}

Tensor rand(const Shape& shape, TensorOptions opts) { return rand(shape, default_generator(), opts); }
Tensor randn(const Shape& shape, TensorOptions opts) { return randn(shape, default_generator(), opts); }
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions opts) {
  return randint(low, high, shape, default_generator(), opts);
}
Tensor randperm(int64_t n, TensorOptions opts) { return randperm(n, default_generator(), opts); }
Tensor rand_like(const Tensor& t) { return rand_like(t, default_generator()); }
Tensor randn_like(const Tensor& t) { return randn_like(t, default_generator()); }
Tensor rand_like(const Tensor& t, Generator& gen) {
  DDL_CHECK(t.defined(), "rand_like: undefined tensor");
  return rand_as(t.shape(), gen, TensorOptions(t.dtype(), t.device()), "rand_like");
}
Tensor randn_like(const Tensor& t, Generator& gen) {
  DDL_CHECK(t.defined(), "randn_like: undefined tensor");
  return randn_as(t.shape(), gen, TensorOptions(t.dtype(), t.device()), "randn_like");
}

const Tensor& uniform_(const Tensor& t, double low, double high, Generator& gen) {
  DDL_CHECK(t.defined(), "uniform_: undefined tensor");
  // PyTorch 1.13 has no integer or bool uniform_ ("check_uniform_bounds" not implemented).
  DDL_CHECK(is_floating(t.dtype()), "uniform_: expected a float tensor, got ", describe(t));
  DDL_CHECK(low <= high, "uniform_: low ", low, " exceeds high ", high);
  t.copy_(
      generate(t.shape(), gen, TensorOptions(t.dtype(), t.device()), Transform{Dist::Uniform, low, high}, "uniform_"));
  return t;
}

const Tensor& normal_(const Tensor& t, double mean, double std, Generator& gen) {
  DDL_CHECK(t.defined(), "normal_: undefined tensor");
  DDL_CHECK(is_floating(t.dtype()), "normal_: expected a float tensor, got ", describe(t));
  DDL_CHECK(std >= 0, "normal_: std must be non-negative, got ", std);
  // A 16-bit tensor is drawn and scaled in float32 and rounded once, by copy_.
  const DType dt = is_reduced_float(t.dtype()) ? DType::Float32 : t.dtype();
  t.copy_(add(mul(randn(t.shape(), gen, TensorOptions(dt, t.device())), std), mean));
  return t;
}

}  // namespace ddl
