// SyntheticDataset: prototypes from Philox at construction, noise per example.
#include <algorithm>
#include <cstring>

#include <ddl/data/synthetic.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::data {
namespace {

// Fills n bytes from the Philox stream (key, counters 0, 1, ...): 16 bytes a counter.
void random_bytes(uint64_t key, uint8_t* out, int64_t n) {
  uint32_t r[4];
  for (int64_t i = 0; i < n; i += 16) {
    philox4x32(static_cast<uint64_t>(i / 16), key, r);
    std::memcpy(out + i, r, static_cast<size_t>(std::min<int64_t>(16, n - i)));
  }
}

// Domain tags keep the prototype, label and noise streams apart.
constexpr uint64_t kPrototype = 1, kLabel = 2, kNoise = 3;

}  // namespace

SyntheticDataset::SyntheticDataset(int64_t n, Shape shape, int64_t num_classes, uint64_t seed, Transform transform)
    : Dataset(std::move(transform)), n_(n), shape_(std::move(shape)), num_classes_(num_classes), seed_(seed) {
  DDL_CHECK(n >= 0 && num_classes >= 1, "SyntheticDataset: need n >= 0 and num_classes >= 1, got n ", n,
            ", num_classes ", num_classes);
  const int64_t numel = shape_.numel();
  prototypes_ = empty({num_classes, numel}, DType::UInt8);
  for (int64_t c = 0; c < num_classes; ++c)
    random_bytes(mix_seed(seed, kPrototype, static_cast<uint64_t>(c)), prototypes_.data<uint8_t>() + c * numel, numel);
}

int64_t SyntheticDataset::label(int64_t index) const {
  return static_cast<int64_t>(mix_seed(seed_, kLabel, static_cast<uint64_t>(index)) %
                              static_cast<uint64_t>(num_classes_));
}

Example SyntheticDataset::load(int64_t index) const {
  const int64_t c = label(index), numel = shape_.numel();
  Tensor data = empty(shape_, DType::UInt8);
  uint8_t* d = data.data<uint8_t>();
  random_bytes(mix_seed(seed_, kNoise, static_cast<uint64_t>(index)), d, numel);
  const uint8_t* proto = prototypes_.data<uint8_t>() + c * numel;
  for (int64_t i = 0; i < numel; ++i) d[i] = static_cast<uint8_t>((int{proto[i]} + int{d[i]} + 1) / 2);
  return {data, scalar_tensor(static_cast<double>(c), DType::Int64)};
}

}  // namespace ddl::data
