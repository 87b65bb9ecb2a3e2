// Seeded random numbers. A Generator is a Philox-4x32 counter stream: element
// i of a draw is a pure function of (seed, offset + i), so results are the
// same for any number of threads; each draw advances the offset.
#pragma once

#include <cstdint>
#include <mutex>

#include <ddl/tensor/core/dispatch.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl {

// Thread-safe: draws from several threads get disjoint counters (in an
// unspecified order); a mutex guards the (seed, offset) pair.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  Generator(const Generator& other) {
    const Draw d = other.state();
    seed_ = d.seed, offset_ = d.offset;
  }
  Generator& operator=(const Generator& other) {
    const Draw d = other.state();
    std::lock_guard<std::mutex> lock(mu_);
    seed_ = d.seed, offset_ = d.offset;
    return *this;
  }
  uint64_t seed() const { return state().seed; }
  void manual_seed(uint64_t seed) {
    std::lock_guard<std::mutex> lock(mu_);
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t offset() const { return state().offset; }
  void set_offset(uint64_t offset) {
    std::lock_guard<std::mutex> lock(mu_);
    offset_ = offset;
  }
  // The key and the first of `n` 128-bit counters reserved for one draw.
  struct Draw {
    uint64_t seed, offset;
  };
  Draw reserve(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    const Draw d{seed_, offset_};
    offset_ += n;
    return d;
  }
  // Reserves `n` counters and returns the first.
  uint64_t advance(uint64_t n) { return reserve(n).offset; }

 private:
  Draw state() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {seed_, offset_};
  }
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide default generator (seed 0 until manual_seed), used by the
// draws below that take no Generator, as torch.manual_seed and torch.rand.
Generator& default_generator();
void manual_seed(uint64_t seed);

// Philox-4x32-10 on counter `ctr` with key `seed`: four independent 32-bit values.
void philox4x32(uint64_t ctr, uint64_t seed, uint32_t out[4]);

Tensor rand(const Shape& shape, Generator& gen, TensorOptions opts = {});   // U[0, 1)
Tensor randn(const Shape& shape, Generator& gen, TensorOptions opts = {});  // N(0, 1)
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator& gen,
               TensorOptions opts = DType::Int64);  // U{low, ..., high - 1}
Tensor randperm(int64_t n, Generator& gen, TensorOptions opts = DType::Int64);
// Bernoulli(p) as 0/1 in the tensor's dtype.
Tensor bernoulli(const Shape& shape, double p, Generator& gen, TensorOptions opts = {});

// The same draws from default_generator().
Tensor rand(const Shape& shape, TensorOptions opts = {});
Tensor randn(const Shape& shape, TensorOptions opts = {});
Tensor randint(int64_t low, int64_t high, const Shape& shape, TensorOptions opts = DType::Int64);
Tensor randperm(int64_t n, TensorOptions opts = DType::Int64);
// Shaped, typed and placed like `t`.
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);
Tensor rand_like(const Tensor& t, Generator& gen);
Tensor randn_like(const Tensor& t, Generator& gen);

const Tensor& uniform_(const Tensor& t, double low, double high, Generator& gen);
const Tensor& normal_(const Tensor& t, double mean, double std, Generator& gen);

namespace random_math {
struct Transform;  // tensor/kernels/random_functors.h
}  // namespace random_math

namespace kernels {
// Fills the contiguous `t` (numeric dtype, on a non-CPU device) with element
// i = random_math::draw_element(seed, offset, i, t is float64, transform).
using RandomFillFn = void(const Tensor& t, uint64_t seed, uint64_t offset, const random_math::Transform& transform);
DDL_DECLARE_KERNEL(random_fill_kernel, RandomFillFn);
}  // namespace kernels

}  // namespace ddl
