// Internal to tensor/cuda/ (include only from .cu files): a stable radix sort of
// (key, value) pairs on the current stream, the first step of the deterministic
// scatters in gather_scatter.cu and index_ops.cu (see Note [Deterministic scatter
// on CUDA] there), and the two helpers those scatters share. Scratch comes from
// the caching allocator, as tensors.
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <type_traits>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/cuda/common.h>

namespace ddl::cuda::detail {

// Elements of t's storage from t's first element on: every element offset a
// view of it reaches (from t.data()) is below this, so it bounds the sort keys.
inline uint64_t reachable_elements(const Tensor& t) {
  return static_cast<uint64_t>(t.storage()->nbytes() / t.element_size()) - static_cast<uint64_t>(t.offset());
}

// One step of an accumulating write, as the CPU kernels do it: `dst + v` rounded to
// T (integers wrap as there), or `dst || v` for bool.
template <typename T>
__device__ __forceinline__ T accumulate_one(T acc, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return acc || v;
  } else {
    return static_cast<T>(acc + v);
  }
}

// keys, values: int64 [n] on one GPU, keys in [0, key_bound). Returns both sorted
// by key; equal keys keep their input order (the sort is stable).
struct SortedPairs {
  Tensor keys, values;
};

inline SortedPairs sort_pairs(const Tensor& keys, const Tensor& values, uint64_t key_bound) {
  const int device = keys.device().index;
  DeviceGuard guard(device);
  const cudaStream_t s = current_stream(device);
  const int64_t n = keys.numel();
  const TensorOptions i64(DType::Int64, keys.device());
  SortedPairs out{empty({n}, i64), empty({n}, i64)};
  if (n == 0) return out;
  // Only the bits a key can use: the largest key is key_bound - 1.
  const uint64_t largest = key_bound > 0 ? key_bound - 1 : 0;
  int end_bit = 1;
  while (end_bit < 64 && (largest >> end_bit) != 0) ++end_bit;
  const auto* kin = static_cast<const uint64_t*>(keys.raw_data());
  auto* kout = static_cast<uint64_t*>(out.keys.raw_data());
  const int64_t* vin = values.data<int64_t>();
  int64_t* vout = out.values.data<int64_t>();
  size_t scratch_bytes = 0;
  DDL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, scratch_bytes, kin, kout, vin, vout, n, 0, end_bit, s));
  const Tensor scratch =
      empty({static_cast<int64_t>(scratch_bytes > 0 ? scratch_bytes : 1)}, TensorOptions(DType::UInt8, keys.device()));
  DDL_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(scratch.raw_data(), scratch_bytes, kin, kout, vin, vout, n, 0, end_bit, s));
  return out;
}

}  // namespace ddl::cuda::detail
