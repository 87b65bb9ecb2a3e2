// Seeded random numbers. A Generator is a Philox-4x32 counter stream: element
// i of a draw is a pure function of (seed, offset + i), so results are the
// same for any number of threads; each draw advances the offset.
#pragma once

#include <cstdint>

#include "tensor/factory.h"
#include "tensor/tensor.h"

namespace ddl {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  uint64_t seed() const { return seed_; }
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  // Reserves `n` 128-bit counters for a draw and returns the first.
  uint64_t advance(uint64_t n) {
    uint64_t start = offset_;
    offset_ += n;
    return start;
  }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide default generator (seed 0 until manual_seed).
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

const Tensor& uniform_(const Tensor& t, double low, double high, Generator& gen);
const Tensor& normal_(const Tensor& t, double mean, double std, Generator& gen);

}  // namespace ddl
